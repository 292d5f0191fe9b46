import { Settings } from 'typebox/system'
import { Value } from 'typebox/value'
import type { TSchema } from '../typebox.ts'

/**
 * A JSON file's problems against a schema, each naming where in the file
 * (`$.operations["BC20ByNoBL"].path`) and the rule broken, in words: what
 * the member must be (its description), the values allowed, the unknown
 * member and the known ones. TypeBox's own messages (`must match pattern
 * "^(/[A-Za-z…"`) say what failed to a validator, not to the person
 * editing the file.
 */

/**
 * `parent` and one member of it: `.name`, `[0]`, or `["document_sp2/final"]` for a key that is no
 * name.
 */
export function member (parent: string, key: string | number): string {
  if (typeof key === 'number' || /^[0-9]+$/.test(key)) return `${parent}[${key}]`
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)
    ? `${parent}.${key}`
    : `${parent}[${JSON.stringify(key)}]`
}

/**
 * A JSON Pointer (`/operations/BC20ByNoBL/path`) as a path a person reads
 * (`$.operations.BC20ByNoBL.path`).
 */
export function jsonPath (pointer: string): string {
  if (pointer === '') return '$'
  return pointer
    .slice(1)
    .split('/')
    .map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    .reduce(member, '$')
}

/** The part of `root` a schema path (`#/properties/a/anyOf/0`) names. */
function schemaAt (root: unknown, schemaPath: string): Record<string, unknown> {
  let at: unknown = root
  for (const part of schemaPath.replace(/^#\/?/, '').split('/').filter(p => p !== '')) {
    at =
      at !== null && typeof at === 'object'
        ? (at as Record<string, unknown>)[part.replaceAll('~1', '/').replaceAll('~0', '~')]
        : undefined
  }
  return at !== null && typeof at === 'object' ? at as Record<string, unknown> : {}
}

function described (schema: Record<string, unknown>): string {
  return typeof schema.description === 'string' ? `: ${schema.description}` : ''
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  array: 'a list ([...])',
  object: 'an object ({...})',
  boolean: 'true or false',
  integer: 'a whole number',
  number: 'a number'
}

/** One schema error in words, or undefined for an error another one already says. */
function words (
  root: unknown,
  error: { keyword: string; schemaPath: string; params: Record<string, unknown>; message: string },
  forms: Readonly<Record<string, string>>
): string | undefined {
  const schema = schemaAt(root, error.schemaPath)
  const { params } = error
  switch (error.keyword) {
    case 'boolean':
      // `additionalProperties: false` reports each unknown member twice; the additionalProperties
      // error names them all.
      return undefined
    case 'additionalProperties': {
      const unknown = (params.additionalProperties as string[] | undefined) ?? []
      const known = Object.keys((schema.properties as object | undefined) ?? {}).filter(
        (k) => k !== '$schema'
      )
      const names = unknown.map((k) => `"${k}"`).join(', ')
      const members = `member${unknown.length === 1 ? '' : 's'}`
      return `unknown ${members} ${names} (known here: ${known.join(', ')})`
    }
    case 'required': {
      const missing = (params.requiredProperties as string[] | undefined) ?? []
      const names = missing.map((k) => `"${k}"`).join(', ')
      return `is missing its member${missing.length === 1 ? '' : 's'} ${names}`
    }
    case 'enum': {
      const allowed = (params.allowedValues as unknown[] | undefined) ?? []
      return `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`
    }
    case 'type':
      return `must be ${TYPE_WORDS[String(params.type)] ?? String(params.type)}${described(schema)}`
    case 'anyOf':
      return `must be one of the forms allowed${described(schema)}`
    case 'pattern': {
      const form = forms[String(params.pattern)]
      return form === undefined
        ? `is not in the form allowed${described(schema)}`
        : `must be ${form}`
    }
    case 'minLength':
      return `must not be empty${described(schema)}`
    case 'maxLength':
      return `is longer than the ${String(params.limit)} characters allowed`
    case 'minItems':
      return `must hold at least ${String(params.limit)} item${params.limit === 1 ? '' : 's'}`
    case 'maxItems':
      return `holds more than the ${String(params.limit)} items allowed`
    case 'uniqueItems':
      return 'holds the same item twice'
    default:
      return `${error.message}${described(schema)}`
  }
}

/** Problems reported at most: enough for any file a person writes, bounded for one that is not. */
const MAX_PROBLEMS = 50

/**
 * Every problem of `value` against `schema`, as `<where>: <rule>`, the
 * branches of a failed choice left to the choice's own line. `forms` says in
 * words what each pattern of the schema allows.
 */
export function schemaProblems (
  schema: TSchema,
  value: unknown,
  forms: Readonly<Record<string, string>> = {}
): string[] {
  // TypeBox stops at 8 errors by default (a global setting): all of them, within a bound, for this
  // one call.
  const before = Settings.Get().maxErrors
  Settings.Set({ maxErrors: MAX_PROBLEMS })
  let errors
  try {
    errors = [...Value.Errors(schema, value)]
  } finally {
    Settings.Set({ maxErrors: before })
  }
  // A failed anyOf says it once, in its own words; the errors of its branches would confuse.
  const choices = errors.filter((e) => e.keyword === 'anyOf').map((e) => `${e.schemaPath}/anyOf/`)
  const out: string[] = []
  for (const issue of errors) {
    if (choices.some((prefix) => issue.schemaPath.startsWith(prefix))) continue
    const text = words(
      schema,
      issue as {
        keyword: string
        schemaPath: string
        params: Record<string, unknown>
        message: string
      },
      forms
    )
    if (text === undefined) continue
    const line = `${jsonPath(issue.instancePath)}: ${text}`
    if (!out.includes(line)) out.push(line)
  }
  return out
}
