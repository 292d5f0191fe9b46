import { readFileSync } from 'node:fs'
import { Value } from 'typebox/value'
import { operationOf, OPERATIONS, type OperationId } from '../catalogue/operations.ts'
import type { HubOperation } from '../catalogue/types.ts'
import { ConfigError } from '../config/load.ts'
import { codeOf } from '../errors.ts'
import { LOGIN_PLACEHOLDERS } from './built-in.ts'
import { holdsPlaceholder } from './login-body.ts'
import { member, schemaProblems } from './problems.ts'
import {
  HubProfileSchema,
  HubProfileShape,
  PATTERN_FORMS,
  type HubProfile,
  type ProfileOperation
} from './schema.ts'

/**
 * A hub profile file (UPSTREAM_PROFILE_FILE), read once at start-up and
 * checked: first against its JSON Schema, then the rules a schema cannot
 * say (placeholders that name the operation's parameters, rules that
 * compile). Every problem names its place in the file and the rule.
 */

/** `{name}` in an address path. */
const PLACEHOLDER = /\{([^{}/]*)\}/g

/**
 * The hub's names of the parameters an operation takes under this entry: its own `params`, or the
 * catalogue's.
 */
export function hubNames (
  op: HubOperation,
  entry: ProfileOperation | undefined
): Map<string, string> {
  const given = entry?.params
  if (given !== undefined) return new Map(Object.entries(given))
  return new Map(op.params.map((p) => [p.name, p.upstream]))
}

/** The problems of one operation's entry that its schema cannot say. */
function entryProblems (id: OperationId, entry: ProfileOperation, at: string): string[] {
  const op = operationOf(id)
  const problems: string[] = []
  const names = hubNames(op, entry)
  const hub = [...names.values()]
  const twice = hub.filter((name, i) => hub.indexOf(name) !== i)
  if (twice.length > 0) {
    problems.push(`${at}.params: two parameters have the hub name ` +
    `"${twice[0]}"`)
  }
  if (op.route.method === 'GET') {
    for (const name of op.route.pathParams ?? []) {
      if (!names.has(name)) {
        problems.push(
          `${at}.params: must include ${name}, a parameter of the route's path (${op.route.url})`
        )
      }
    }
  }
  if (entry.path !== undefined) {
    const seen = new Set<string>()
    for (const segment of entry.path.split('/')) {
      const placeholders = [...segment.matchAll(PLACEHOLDER)]
      if (placeholders.length === 0) {
        if (segment.includes('{') || segment.includes('}')) {
          problems.push(
            `${at}.path: "${segment}" has a brace that opens no placeholder ({name} of a parameter)`
          )
        }
        continue
      }
      const name = placeholders[0]![1]!
      if (placeholders.length > 1 || segment !== `{${name}}`) {
        problems.push(
          `${at}.path: a placeholder must be a whole segment between slashes ("${segment}")`
        )
      } else if (!hub.includes(name)) {
        problems.push(
          `${at}.path: {${name}} names no parameter of this operation (its hub names: ` +
          `${hub.join(', ') || 'none'}; set \`params\` to take another)`
        )
      } else if (seen.has(name)) {
        problems.push(`${at}.path: {${name}} appears twice`)
      }
      seen.add(name)
    }
  }
  return problems
}

function ruleProblems (profile: HubProfile): string[] {
  const problems: string[] = []
  const failures = [
    ['$.defaults.failure', profile.defaults?.failure] as const,
    ...Object.entries(profile.operations ?? {}).map(
      ([id, entry]) => [`${member('$.operations', id)}.failure`, entry.failure] as const
    )
  ]
  for (const [at, failure] of failures) {
    for (const [i, rule] of (failure?.codes ?? []).entries()) {
      try {
        // eslint-disable-next-line no-new
        new RegExp(rule.match, 'i')
      } catch (error) {
        problems.push(
          `${member(`${at}.codes`, i)}.match: is not a regular expression ` +
          `(${error instanceof Error ? error.message : String(error)})`
        )
      }
    }
  }
  const body = profile.login?.body
  for (const [what, placeholder] of Object.entries(LOGIN_PLACEHOLDERS)) {
    if (body !== undefined && !holdsPlaceholder(body, placeholder)) {
      const rule = `must hold "${placeholder}" as a whole string value (where the ${what} goes)`
      problems.push(`$.login.body: ${rule}`)
    }
  }
  return problems
}

/**
 * The problems of a parsed profile, each `<where>: <rule>`; none when it is
 * valid. The semantic rules are checked only once the schema holds.
 */
export function profileProblems (value: unknown): string[] {
  const problems = schemaProblems(HubProfileSchema, value, PATTERN_FORMS)
  if (problems.length > 0 || !Value.Check(HubProfileShape, value)) return problems
  const known = new Set<string>(OPERATIONS.map(op => op.id))
  for (const [id, entry] of Object.entries(value.operations ?? {})) {
    if (known.has(id)) {
      problems.push(...entryProblems(id as OperationId, entry, member('$.operations', id)))
    }
  }
  return [...problems, ...ruleProblems(value)]
}

/** A profile given as a value, checked as a file is; throws ConfigError with a line per problem. */
export function checkedProfile (value: unknown, where: string): HubProfile {
  const problems = profileProblems(value)
  if (problems.length > 0 || !Value.Check(HubProfileShape, value)) {
    throw new ConfigError(problems.map(problem => `${where} ${problem}`))
  }
  return value
}

/**
 * The profile in `file`, checked; throws ConfigError with one line per problem, each naming the
 * file.
 */
export function loadProfileFile (file: string): HubProfile {
  const where = `UPSTREAM_PROFILE_FILE (${file})`
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new ConfigError([
      `${where}: cannot be read ` +
      `(${codeOf(error) ?? (error instanceof Error ? error.message : String(error))})`
    ])
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new ConfigError([
      `${where}: is not JSON (${error instanceof Error ? error.message : String(error)})`
    ])
  }
  return checkedProfile(value, where)
}
