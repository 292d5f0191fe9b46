import { parseArgs } from 'node:util'
import type { ParamKind } from '../catalogue/types.ts'
import { isContainerNo, isNpwp } from '../domain/identifiers.ts'

/** What the operator asked of one run of `npm run probe-hub`. */
export interface ProbeOptions {
  hubUrl: string | undefined
  baseUrl: string | undefined
  /** The values the lookups are made with, by the gateway's names (dates YYYY-MM-DD). */
  values: Partial<Record<ParamKind, string>>
  discover: boolean
  json: boolean
  /** Hub calls at most, every try of --discover included. */
  maxCalls: number
  /** Wait between two calls. */
  pauseMs: number
  /** Time allowed for one call's answer. */
  timeoutMs: number
  /** Address prefixes --discover tries before its own list. */
  tryPrefixes: string[]
  /** API-key header names --discover tries before its own list. */
  tryKeyHeaders: string[]
  /** Token header names --discover tries before its own list. */
  tryTokenHeaders: string[]
}

export const DEFAULT_MAX_CALLS = 200
export const DEFAULT_PAUSE_MS = 200
export const DEFAULT_TIMEOUT_MS = 10_000

/** The command line was wrong: one line per problem (exit code 2). */
export class UsageError extends Error {
  readonly problems: readonly string[]
  constructor (problems: readonly string[]) {
    super(problems.join('; '))
    this.name = 'UsageError'
    this.problems = problems
  }
}

export const USAGE = `npm run -s probe-hub -- --npwp <taxpayer number>
  [--bl-no <BL> --bl-date <YYYY-MM-DD>] [--pib-no <PIB>] [--container-no <container>]
  [--hub-url <url>] [--base-url <url>] [--discover] [--try-prefix </prefix>]...
  [--try-key-header <name>]... [--try-token-header <name>]...
  [--max-calls <n>] [--pause-ms <ms>] [--timeout-ms <ms>] [--json]`

const PREFIX = /^(\/[A-Za-z0-9._~!$&'()*+,;=:@-]+)+$/
const HEADER = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/
const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/

function whole (
  problems: string[],
  flag: string,
  raw: string | undefined,
  fallback: number,
  min: number,
  max: number
): number {
  if (raw === undefined) return fallback
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN
  if (Number.isInteger(value) && value >= min && value <= max) return value
  problems.push(`--${flag}: must be a whole number from ${min} to ${max} (got "${raw}")`)
  return fallback
}

function url (problems: string[], flag: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined
  if (/^https?:\/\/[^/]/.test(raw) && URL.canParse(raw)) return raw
  problems.push(`--${flag}: must be an http:// or https:// address (got "${raw}")`)
  return undefined
}

/** The options of `argv` (without node and the script); throws UsageError naming each problem. */
export function parseOptions (argv: readonly string[]): ProbeOptions {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        npwp: { type: 'string' },
        'bl-no': { type: 'string' },
        'bl-date': { type: 'string' },
        'pib-no': { type: 'string' },
        'container-no': { type: 'string' },
        'hub-url': { type: 'string' },
        'base-url': { type: 'string' },
        discover: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        'max-calls': { type: 'string' },
        'pause-ms': { type: 'string' },
        'timeout-ms': { type: 'string' },
        'try-prefix': { type: 'string', multiple: true },
        'try-key-header': { type: 'string', multiple: true },
        'try-token-header': { type: 'string', multiple: true }
      }
    }).values
  } catch (error) {
    throw new UsageError([error instanceof Error ? error.message : String(error)])
  }
  const problems: string[] = []
  const npwp = parsed.npwp?.replace(/[.-]/g, '')
  if (npwp === undefined) {
    problems.push('--npwp: is required (a taxpayer number the hub knows, ' +
    '15 or 16 digits)')
  } else if (!isNpwp(npwp)) {
    problems.push(
      `--npwp: must be 15 or 16 digits, dots and dashes allowed (got "${parsed.npwp ?? ''}")`
    )
  }
  const blDate = parsed['bl-date']
  if (blDate !== undefined && !DATE.test(blDate)) {
    problems.push('--bl-date: must be a date ' +
    `YYYY-MM-DD (got "${blDate}")`)
  }
  const containerNo = parsed['container-no']?.toUpperCase()
  if (containerNo !== undefined && !isContainerNo(containerNo)) {
    problems.push(
      `--container-no: must be a container number such as MSCU1234565 (got "${containerNo}")`
    )
  }
  const pibNo = parsed['pib-no']
  if (pibNo !== undefined && !/^\d{6}$/.test(pibNo)) {
    problems.push('--pib-no: must be 6 digits ' +
    `(got "${pibNo}")`)
  }
  const blNo = parsed['bl-no']
  if (blNo !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(blNo)) {
    problems.push('--bl-no: must ' +
    `be 1 to 64 letters, digits and ._- (got "${blNo}")`)
  }
  const tryPrefixes = parsed['try-prefix'] ?? []
  for (const prefix of tryPrefixes) {
    if (!PREFIX.test(prefix)) {
      problems.push(
        `--try-prefix: must be an address prefix such as /V1/NLE/INT/AUTH (got "${prefix}")`
      )
    }
  }
  const tryKeyHeaders = parsed['try-key-header'] ?? []
  const tryTokenHeaders = parsed['try-token-header'] ?? []
  const headerFlags = [
    ['try-key-header', tryKeyHeaders], ['try-token-header', tryTokenHeaders]
  ] as const
  for (const [flag, names] of headerFlags) {
    for (const name of names) {
      if (HEADER.test(name)) continue
      problems.push(`--${flag}: must be a header name such as x-api-key (got "${name}")`)
    }
  }
  const options: ProbeOptions = {
    hubUrl: url(problems, 'hub-url', parsed['hub-url']),
    baseUrl: url(problems, 'base-url', parsed['base-url']),
    values: {
      ...(npwp === undefined ? {} : { npwp }),
      ...(blNo === undefined ? {} : { blNo }),
      ...(blDate === undefined ? {} : { blDate }),
      ...(pibNo === undefined ? {} : { pibNo }),
      ...(containerNo === undefined ? {} : { containerNo })
    },
    discover: parsed.discover === true,
    json: parsed.json === true,
    maxCalls: whole(problems, 'max-calls', parsed['max-calls'], DEFAULT_MAX_CALLS, 1, 1000),
    pauseMs: whole(problems, 'pause-ms', parsed['pause-ms'], DEFAULT_PAUSE_MS, 0, 60_000),
    timeoutMs: whole(
      problems,
      'timeout-ms',
      parsed['timeout-ms'],
      DEFAULT_TIMEOUT_MS,
      100,
      120_000
    ),
    tryPrefixes,
    tryKeyHeaders,
    tryTokenHeaders
  }
  if (problems.length > 0) throw new UsageError(problems)
  return options
}
