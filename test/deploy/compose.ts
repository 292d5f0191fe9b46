import { readFileSync } from 'node:fs'
import AjvModule, { type ValidateFunction } from 'ajv'
import { parse } from 'yaml'

/** The parts of a Compose file that the checks read. */
export interface ComposeService {
  image?: string
  build?: { context?: string, dockerfile?: string }
  environment?: Record<string, string | number | boolean | null>
  secrets?: Array<string | { source: string, target?: string }>
  configs?: Array<string | { source: string, target?: string }>
  expose?: Array<string | number>
  ports?: string[]
  command?: string[]
  user?: string
  read_only?: boolean
  cap_drop?: string[]
  security_opt?: string[]
  stop_grace_period?: string
  volumes?: string[]
  networks?: string[]
  [key: string]: unknown
}

export interface ComposeFile {
  services: Record<string, ComposeService>
  secrets?: Record<string, { file?: string, environment?: string, content?: string }>
  configs?: Record<string, { file?: string, content?: string }>
  [key: string]: unknown
}

export function readCompose (file: string): unknown {
  return parse(readFileSync(file, 'utf8'), { strict: true, uniqueKeys: true, merge: true })
}

// `$$`, `${NAME}`, `${NAME:-default}`, `${NAME-default}`, `$NAME`; any other `${…}` form is
// refused.
const VARIABLE =
  /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)|\$\{[^}]*\}/g

/**
 * Compose's interpolation of `${…}` in values, as `docker compose config`
 * does it before validating, for the forms the deployment uses.
 */
export function interpolate<T> (value: T, vars: Record<string, string>): T {
  if (typeof value === 'string') {
    return value.replace(
      VARIABLE,
      (match, name?: string, operator?: string, fallback?: string, bare?: string) => {
        if (match === '$$') return '$'
        if (bare !== undefined) return vars[bare] ?? ''
        if (name === undefined) throw new Error(`unsupported interpolation ${match}`)
        const given = vars[name]
        if (operator === ':-') return given === undefined || given === '' ? (fallback ?? '') : given
        if (operator === '-') return given ?? fallback ?? ''
        return given ?? ''
      }
    ) as T
  }
  if (Array.isArray(value)) return value.map(item => interpolate(item, vars)) as T
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, interpolate(item, vars)])
    ) as T
  }
  return value
}

let validator: ValidateFunction | undefined

/**
 * Problems of a Compose file against the Compose Specification's schema
 * (test/deploy/compose-spec.json).
 */
export function composeSchemaProblems (document: unknown): string[] {
  if (validator === undefined) {
    const schema = JSON.parse(
      readFileSync(new URL('./compose-spec.json', import.meta.url), 'utf8')
    ) as Record<string, unknown>
    // The schema names its draft by an https:// address Ajv does not know by that name; it is
    // draft-07, Ajv's default.
    const { $schema: _draft, ...rest } = schema
    // Ajv is CommonJS: its class is the default export's `default`.
    const Ajv = AjvModule.default
    validator = new Ajv({ allErrors: true, strict: false }).compile(rest)
  }
  if (validator(document)) return []
  return (validator.errors ?? []).map((error) => {
    const extra = error.params !== undefined && 'additionalProperty' in error.params
      ? `: ${String(error.params.additionalProperty)}`
      : ''
    return `${error.instancePath || '/'} ${error.message ?? ''}${extra}`
  })
}

/**
 * Lines NAME=value of a .env file; with `commented`, `# NAME=value` lines too (names a template
 * offers).
 */
export function readEnvLines (text: string, { commented = false } = {}): Record<string, string> {
  const entries: Array<[string, string]> = []
  for (const line of text.split('\n')) {
    const match = (
      commented ? /^(?:# ?)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/ : /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/
    ).exec(line.trim())
    if (match?.[1] !== undefined) entries.push([match[1], match[2] ?? ''])
  }
  return Object.fromEntries(entries)
}
