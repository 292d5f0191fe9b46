import { readFile } from 'node:fs/promises'
import type { ErrorObject, ValidateFunction } from 'ajv'
import { OPERATIONS } from './operations.ts'
import type { ParamKind } from './context.ts'
import type { Operation } from './operations.ts'

// The sandbox's own reading of a hub profile file (docs/hub.md#hub-profiles): the
// committed JSON Schema checks its form (with ajv: the same file any editor
// or validator reads), and the rules below check that the sandbox can play
// it. Nothing of the gateway's reader is used, so that a profile the two
// read differently shows up as a failing test.

export type DateSent = 'YYYYMMDD' | 'YYYY-MM-DD'
export type DateAnswered = 'YYYY-MM-DD HH:MM:SS.S' | 'YYYY-MM-DD' | 'YYYYMMDD'
  | 'DD-MON-YY' | 'DD-MON-YYYY'

export interface ProfileFailure {
  statusField?: string
  successValues?: string[]
  statusCodeField?: string
  messageWithoutData?: boolean
}

export interface ProfileSettings {
  apiKeyHeader?: string | string[]
  tokenHeader?: string
  credentials?: Array<'apiKey' | 'token'>
  answerKey?: string
  dateSent?: DateSent
  dateAnswered?: DateAnswered
  errorFields?: string[]
  nullStrings?: string[]
  failure?: ProfileFailure
  /** How the hub answers a list lookup that finds nothing: an empty list, or a 404. */
  notFound?: 'empty' | '404'
}

export interface ProfileOperation extends ProfileSettings {
  prefix?: string
  path?: string
  /** The parameters, by what they mean, each with the hub's name. */
  params?: Partial<Record<ParamKind, string>>
}

export interface ProfileLogin {
  path?: string
  refreshPath?: string
  tokenField?: string
  expiresField?: string
  refreshTokenField?: string
}

/** A profile as the sandbox reads it (the members it plays; the schema allows more). */
export interface HubProfile {
  name: string
  prefixes?: Partial<Record<Operation['area'], string>>
  tokenScheme?: string
  stringValues?: boolean
  login?: ProfileLogin
  defaults?: ProfileSettings
  operations?: Record<string, ProfileOperation>
}

/** A profile the sandbox cannot play: one line per problem, each naming its place in the file. */
export class ProfileError extends Error {
  readonly problems: string[]
  constructor (source: string, problems: string[]) {
    super(`sandbox profile ${source}:\n${problems.map((p) => `  ${p}`).join('\n')}`)
    this.name = 'ProfileError'
    this.problems = problems
  }
}

const SCHEMA = new URL('../../deploy/profiles/profile.schema.json', import.meta.url)
let compiled: Promise<ValidateFunction> | undefined

/** The committed schema, compiled once; ajv is loaded only when a profile is played. */
function schemaCheck (): Promise<ValidateFunction> {
  compiled ??= (async () => {
    const [{ default: ajv }, text] = await Promise.all([import('ajv/dist/2020.js'), readFile(SCHEMA, 'utf8')])
    // The package's CommonJS default export, as Node's ESM loader presents it.
    const Ajv = ajv.default
    return new Ajv({ allErrors: true, strict: false }).compile(JSON.parse(text) as object)
  })()
  return compiled
}

/** `$.operations["document_sp2/final"].path` from a JSON pointer. */
export function placeOf (pointer: string | readonly string[]): string {
  const names = typeof pointer === 'string'
    ? pointer.split('/').slice(1).map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'))
    : pointer
  return '$' + names.map((name) => /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(name) ? `.${name}` : /^\d+$/.test(name) ? `[${name}]` : `[${JSON.stringify(name)}]`).join('')
}

function schemaProblem (error: ErrorObject): string {
  const params = error.params as { allowedValues?: unknown[], additionalProperty?: string, missingProperty?: string }
  const detail = params.allowedValues !== undefined
    ? ` (${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')})`
    : params.additionalProperty !== undefined ? ` ("${params.additionalProperty}")` : ''
  return `${placeOf(error.instancePath)}: ${error.message ?? 'is not valid'}${detail}`
}

/** The `{placeholder}` segments of an address path, and what is wrong with its braces. */
export function placeholders (path: string): { names: string[], problems: string[] } {
  const names: string[] = []
  const problems: string[] = []
  for (const segment of path.split('/')) {
    const whole = /^\{([^{}]+)\}$/.exec(segment)
    if (whole?.[1] !== undefined) {
      if (names.includes(whole[1])) problems.push(`{${whole[1]}} appears twice`)
      names.push(whole[1])
    } else if (/[{}]/.test(segment)) {
      problems.push(`"${segment}": a placeholder must be a whole segment between slashes`)
    }
  }
  return { names, problems }
}

/** The hub's names of the parameters an operation takes under the profile. */
export function hubNames (operation: Operation, entry: ProfileOperation | undefined): Map<ParamKind, string> {
  if (entry?.params === undefined) return new Map(operation.params.map((p) => [p.kind, p.name]))
  return new Map(Object.entries(entry.params) as Array<[ParamKind, string]>)
}

/** Where the sandbox's login answers keep the token, its lifetime and the refresh token, in each of its forms (login.ts). */
const LOGIN_FORMS = {
  plain: { tokenField: 'access_token', expiresField: 'expires_in', refreshTokenField: 'refresh_token' },
  envelope: { tokenField: 'item.access_token', expiresField: 'item.expires_in', refreshTokenField: 'item.refresh_token' }
} as const

type LoginField = keyof typeof LOGIN_FORMS.plain

/** The form of the login answer the profile describes: the envelope when a field it names is under `item`. */
function loginForm (login: ProfileLogin): keyof typeof LOGIN_FORMS {
  return (['tokenField', 'expiresField', 'refreshTokenField'] as const).some((field) => login[field]?.startsWith('item.') === true) ? 'envelope' : 'plain'
}

/**
 * The login the sandbox plays for a profile: the form of its answers, its
 * addresses (the sandbox's own when the profile gives none), and whether
 * it issues refresh tokens (with the envelope, or when the profile names a
 * refresh token or a renewal).
 */
export function loginOf (profile: HubProfile): { loginAnswer: 'plain' | 'envelope', loginPath?: string, refreshPath?: string, refreshTokens: boolean } {
  const login = profile.login ?? {}
  const form = loginForm(login)
  return {
    loginAnswer: form,
    ...(login.path === undefined ? {} : { loginPath: login.path }),
    ...(login.refreshPath === undefined ? {} : { refreshPath: login.refreshPath }),
    refreshTokens: form === 'envelope' || login.refreshTokenField !== undefined || login.refreshPath !== undefined
  }
}

/** A login whose fields the sandbox's answers do not hold: one problem per field. */
function loginProblems (login: ProfileLogin | undefined): string[] {
  if (login === undefined) return []
  const form = loginForm(login)
  const fields = LOGIN_FORMS[form]
  return (Object.keys(fields) as LoginField[])
    .filter((field) => login[field] !== undefined && login[field] !== fields[field])
    .map((field) => `$.login.${field}: the sandbox's login answers ${form === 'envelope' ? 'in the envelope' : 'plainly'}, with it at ${fields[field]} (its answers: ${Object.values(LOGIN_FORMS.plain).join(', ')}, or ${Object.values(LOGIN_FORMS.envelope).join(', ')})`)
}

/**
 * What the sandbox cannot play in a profile the schema accepts: a schema
 * made from a catalogue that has moved on may name an operation or a
 * parameter the sandbox does not have yet.
 */
export function playProblems (profile: HubProfile): string[] {
  const problems: string[] = loginProblems(profile.login)
  for (const [name, entry] of Object.entries(profile.operations ?? {})) {
    const at = placeOf(['operations', name])
    const operation = OPERATIONS.find((op) => op.name === name)
    if (operation === undefined) {
      problems.push(`${at}: the sandbox has no operation "${name}"`)
      continue
    }
    for (const kind of Object.keys(entry.params ?? {})) {
      if (!(operation.accepts as readonly string[]).includes(kind)) {
        problems.push(`${at}.params: the sandbox's ${name} does not read "${kind}" (it reads ${operation.accepts.join(', ')})`)
      }
    }
    const names = hubNames(operation, entry)
    const hub = [...names.values()]
    for (const [i, value] of hub.entries()) {
      if (hub.indexOf(value) !== i) problems.push(`${at}.params: two parameters have the hub name "${value}"`)
    }
    if (entry.path !== undefined) {
      const found = placeholders(entry.path)
      problems.push(...found.problems.map((p) => `${at}.path: ${p}`))
      for (const placeholder of found.names) {
        if (!hub.includes(placeholder)) problems.push(`${at}.path: {${placeholder}} names no parameter of this operation (its hub names: ${hub.join(', ') || 'none'})`)
      }
    }
  }
  return problems
}

/**
 * Reads a profile: a file's path, or the profile itself (parsed JSON).
 * Throws ProfileError naming every problem.
 */
export async function readProfile (source: string | object): Promise<HubProfile> {
  const label = typeof source === 'string' ? `(${source})` : '(given)'
  let value: unknown = source
  if (typeof source === 'string') {
    let text: string
    try {
      text = await readFile(source, 'utf8')
    } catch (error) {
      // The sandbox imports nothing of the gateway, so not its codeOf: the same reading, here.
      const code = typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : String(error)
      throw new ProfileError(label, [`cannot be read (${code})`])
    }
    try {
      value = JSON.parse(text)
    } catch (error) {
      throw new ProfileError(label, [`is not JSON (${error instanceof Error ? error.message : String(error)})`])
    }
  }
  const check = await schemaCheck()
  if (!check(value)) throw new ProfileError(label, [...new Set((check.errors ?? []).map(schemaProblem))])
  const profile = value as HubProfile
  const problems = playProblems(profile)
  if (problems.length > 0) throw new ProfileError(label, problems)
  return profile
}
