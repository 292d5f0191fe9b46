import { FORMATS, formatProblem, printable } from './formats.ts'

/**
 * Validation problems in words a caller can act on, taken from the schema a
 * value broke: its type, bounds, format (whose rule is written beside its
 * check, formats.ts) and so on. No second table of rules per field: what a
 * message says is what the schema checks.
 */

/**
 * One problem: where (`query.npwp`, `path.sp2Id`, `body.price`, `header.idempotency-key`) and the
 * rule broken.
 */
export interface Problem { field: string, rule: string }

/** An ajv error, as Fastify hands it over (with `verbose`: the schema and the data). */
export interface AjvIssue {
  keyword: string
  instancePath: string
  message?: string
  params: Record<string, unknown>
  /** The value of the keyword in the schema (verbose). */
  schema?: unknown
  /** The schema holding the keyword (verbose). */
  parentSchema?: Record<string, unknown>
  /** The value that broke it (verbose). */
  data?: unknown
}

/** Where a part of the request is named in `field`, by Fastify's name of the part. */
export const PART_NAMES = {
  params: 'path',
  querystring: 'query',
  body: 'body',
  headers: 'header'
} as const

/** At most this many problems are reported for one request. */
export const MAX_PROBLEMS = 20

const JSON_TYPES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'a whole number',
  boolean: 'a boolean (true or false)',
  object: 'a JSON object',
  array: 'an array',
  null: 'null'
}

function typeRule (type: unknown): string {
  const types = (Array.isArray(type) ? type : [type]).map(t => JSON_TYPES[String(t)] ?? String(t))
  return `must be ${types.join(' or ')}`
}

function times (n: number): string {
  return n === 2 ? 'twice' : `${n} times`
}

/** `multipleOf: 0.01` reads "at most 2 decimals"; other steps as they are. */
function multipleRule (step: unknown): string {
  if (typeof step !== 'number') return 'must be a multiple of the step the field allows'
  if (step === 1) return 'must be a whole number'
  const places = /^0\.(0*)1$/.exec(String(step))
  return places === null
    ? `must be a multiple of ${step}`
    : `must have at most ${(places[1] ?? '').length + 1} decimals`
}

function ruleOf (issue: AjvIssue, where: string): string {
  const p = issue.params
  switch (issue.keyword) {
    case 'required':
      return 'is required'
    case 'additionalProperties':
      return where === 'body' ? 'is not a field of this body' : 'is not a parameter of this route'
    case 'type':
      if (where === 'query' && Array.isArray(issue.data)) {
        return 'is given ' +
        `${times(issue.data.length)}; give it once`
      }
      return typeRule(p.type)
    case 'format': {
      // A refused character, whatever the format (which one and where), a blank or padded
      // identifier.
      const problem =
        typeof issue.data === 'string' ? formatProblem(String(p.format), issue.data) : undefined
      if (problem !== undefined) return problem
      const format = FORMATS[String(p.format) as keyof typeof FORMATS] as
        { rule: string } | undefined
      return format === undefined
        ? `must be in the format ${String(p.format)}`
        : `must be ${format.rule}`
    }
    case 'pattern':
      return `must match the pattern ${String(p.pattern)}`
    case 'minLength':
      return p.limit === 1 ? 'must not be empty' : `must be at least ${String(p.limit)} characters`
    case 'maxLength':
      return `must be at most ${String(p.limit)} characters`
    case 'minimum':
      return `must be at least ${String(p.limit)}`
    case 'maximum':
      return `must be at most ${String(p.limit)}`
    case 'exclusiveMinimum':
      return `must be more than ${String(p.limit)}`
    case 'exclusiveMaximum':
      return `must be less than ${String(p.limit)}`
    case 'multipleOf':
      return multipleRule(issue.schema)
    case 'enum': {
      const allowed = Array.isArray(p.allowedValues) ? p.allowedValues : []
      return `must be one of: ${allowed.map((v) => JSON.stringify(v)).join(', ')}`
    }
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`
    case 'minProperties':
      return p.limit === 1 ? 'must not be empty' : `must have at least ${String(p.limit)} fields`
    case 'maxProperties':
      return p.limit === 0 ? 'must be empty ({})' : `must have at most ${String(p.limit)} fields`
    default:
      return issue.message ?? 'is invalid'
  }
}

function fieldOf (issue: AjvIssue, where: string): string {
  const path = issue.instancePath
    .split('/')
    .filter(Boolean)
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'))
  const name = issue.keyword === 'required'
    ? String(issue.params.missingProperty)
    : issue.keyword === 'additionalProperties' ? String(issue.params.additionalProperty) : undefined
  // A name the caller made up (an unknown field or parameter) is echoed with its refused characters
  // escaped.
  return printable([where, ...path, ...(name === undefined ? [] : [name])].join('.'))
}

/**
 * The problems of one part of a request: one per field and rule. `data` is
 * the part as received (undefined: the part is missing, e.g. no body).
 */
export function describeProblems (
  issues: readonly AjvIssue[],
  where: string,
  data: unknown
): Problem[] {
  const out: Problem[] = []
  const seen = new Set<string>()
  const formatFailed = new Set(
    issues.filter((i) => i.keyword === 'format').map((i) => fieldOf(i, where))
  )
  const empty = new Set(
    issues.filter((i) => i.keyword === 'minLength' && i.data === '').map((i) => fieldOf(i, where))
  )
  for (const issue of issues) {
    const field = fieldOf(issue, where)
    // A pattern beside a format is the same rule in another form: the format's words say it.
    if (issue.keyword === 'pattern' && formatFailed.has(field)) continue
    // An empty value breaks its format too: "must not be empty" says it.
    if (issue.keyword === 'format' && empty.has(field)) continue
    const rule =
      field === where && issue.keyword === 'type' && data === undefined
        ? `is required: ${typeRule(issue.params.type).replace(/^must be /, '')}`
        : ruleOf(issue, where)
    const key = `${field}\u0000${rule}`
    if (seen.has(key)) continue
    seen.add(key)
    out.push({ field, rule })
  }
  return out
}

/** The envelope's message for these problems: each one, then how many were left out. */
export function problemsMessage (problems: readonly Problem[], total: number): string {
  const listed = problems.map(p => `${p.field} ${p.rule}`).join('; ')
  return total > problems.length ? `${listed}; and ${total - problems.length} more` : listed
}
