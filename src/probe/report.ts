import { OPERATIONS } from '../catalogue/operations.ts'
import type { Area } from '../catalogue/types.ts'
import type { HubProfile } from '../profile/schema.ts'
import { observed, RANK, type Finding } from './probe.ts'
import type { Difference, HubEvidence } from './propose.ts'
import type { LoginSeen, Members } from './provenance.ts'

/** One operation in the report: `--json` prints these as they are. */
export interface OperationReport {
  operation: string
  /** Reached: the hub answered it (with data, an empty list, or not found for a record). */
  reached: boolean
  /** Why it was not called. */
  skipped?: string
  status?: number
  /** What happened instead of an answer. */
  error?: string
  ms?: number
  calls: number
  /** The address that answered (or the configured one), values as {placeholders}. */
  address?: string
  /** Found by --discover: the configured form did not answer. */
  discovered: boolean
  answerKey?: string
  items?: number
  extraFields?: string[]
  dateForms?: string[]
  valueForms?: { numbersAsStrings: number, nullStrings: number, emptyStrings: number }
  errorFields?: string[]
  /** The differences that concern it (those of `differences` that name it). */
  differences: Difference[]
}

export interface ProbeReport {
  hub: { hubUrl: string, baseUrl: string }
  configuredProfile: { name: string, source: string, digest: string }
  calls: number
  maxCalls: number
  /** Login mode: the probe's own logins and renewals by refresh token. */
  login?: LoginSeen
  /** Whether the hub differs from the profile in force: exactly when `differences` lists one. */
  drift: boolean
  /** Whether --discover was on. */
  discovered: boolean
  /** What explains most at once, said first (the prefixes the probe does not know). */
  hints: string[]
  operations: OperationReport[]
  /** Every difference: of the whole profile, of the operations, and the operations not reached. */
  differences: Difference[]
  /** The members of `profile` the hub's answers showed, and those taken on trust. */
  members: Members
  profile: HubProfile
}

function addressOf (finding: Finding): string | undefined {
  const variant = finding.best?.variant ?? finding.configured
  const query = variant.params.filter(p => !variant.path.includes(`{${p.upstream}}`))
    .map(p => `${p.upstream}={${p.upstream}}`).join('&')
  return `${variant.prefix}/${variant.path}${query === '' ? '' : `?${query}`}`
}

/** An operation called and not reached, as a difference: nothing the probe saw says what fits. */
function unreached (finding: Finding, discover: boolean): Difference {
  const { status, error } = finding.best!.result
  const what = error ?? (status !== undefined && status >= 200 && status < 300
    ? `status ${status} without its data`
    : `status ${status ?? '?'}`)
  const next = discover ? 'no variant tried answered' : '--discover tries the known variants'
  return {
    setting: `operations.${finding.op.id}`,
    configured: addressOf({ ...finding, best: finding.first }),
    proposed: null,
    operations: [finding.op.id],
    note: `not reached (${what}); ${next}`
  }
}

/** The report's operations and its differences, the operations not reached among them. */
export function operationReports (
  findings: readonly Finding[], rows: readonly Difference[], discover: boolean
): { operations: OperationReport[], differences: Difference[] } {
  const all = [...rows]
  const operations = findings.map((finding): OperationReport => {
    const best = finding.best
    const operation = finding.op.id
    if (finding.skipped !== undefined || best === undefined) {
      const skipped = finding.skipped ?? 'not called'
      const { calls } = finding
      return { operation, reached: false, skipped, calls, discovered: false, differences: [] }
    }
    const seen = observed(finding)
    const reached = best.rank >= RANK.empty
    if (!reached) all.push(unreached(finding, discover))
    const { status, error, ms } = best.result
    return {
      operation,
      reached,
      ...(status === undefined ? {} : { status }),
      ...(error === undefined ? {} : { error }),
      ms,
      calls: finding.calls,
      ...(reached ? { address: addressOf(finding) } : {}),
      discovered: best !== finding.first,
      ...(seen.answerKey === undefined ? {} : { answerKey: seen.answerKey }),
      ...(best.located === undefined
        ? {}
        : { items: seen.items, extraFields: seen.extraFields, dateForms: seen.dateForms }),
      ...(seen.valueForms === undefined ? {} : { valueForms: seen.valueForms }),
      errorFields: seen.errorFields,
      differences: []
    }
  })
  for (const o of operations) {
    o.differences = all.filter(d => d.operations?.includes(o.operation) === true)
  }
  return { operations, differences: all }
}

const AREA_WORDS: Readonly<Record<Area, string>> = {
  lookup: 'lookup', sp2: 'SP2 operation', booking: 'booking operation'
}

/** What explains most at once: unknown prefixes; state members never seen failing. */
export function hints (
  unknownPrefixes: readonly Area[], hub: HubEvidence, discover: boolean, tried: readonly string[]
): string[] {
  const out: string[] = []
  for (const area of unknownPrefixes) {
    const given = tried.length === 0 ? '' : ` (tried as well: ${tried.join(', ')})`
    out.push(`The prefixes are the problem: no ${AREA_WORDS[area]} answered at any address ` +
      `tried${given}; each answered as an address that names no operation. Give the hub's ` +
      `${area} prefix from its documentation with --try-prefix /its/prefix` +
      `${discover ? '' : ' and --discover'}.`)
  }
  for (const { field, values } of hub.onlySuccess) {
    out.push(`"${field}" beside the data was only ever ${values.map(v => `"${v}"`).join(', ')}, ` +
      'and no answer seen reported a failure in it: no failure rule proposed from it.')
  }
  return out
}

function cell (value: string, width: number): string {
  return value.length > width ? `${value.slice(0, width - 1)}…` : value.padEnd(width)
}

function show (value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** The values column: the forms of the values seen. */
function valuesCell (o: OperationReport): string {
  const forms = o.valueForms
  if (forms === undefined) return ''
  const seen = [
    forms.numbersAsStrings > 0 ? 'num-as-str' : '',
    forms.nullStrings > 0 ? '"null"' : '',
    forms.emptyStrings > 0 ? '""' : ''
  ]
  return seen.filter(Boolean).join(' ')
}

/** One difference as a line: the member, what the profile in force says and what the hub showed. */
function line (d: Difference): string {
  if (d.note !== undefined) return `  ${d.setting}: ${d.note}`
  const ops = d.operations ?? []
  let which = ''
  if (ops.length > 1 && !d.setting.startsWith('operations.')) {
    if (ops.length === OPERATIONS.length) which = ' (every operation)'
    else which = ops.length <= 3 ? ` (${ops.join(', ')})` : ` (${ops.length} operations)`
  }
  const before = d.configuredEach === true ? 'each operation\'s own' : show(d.configured)
  return `  ${d.setting}: ${before} -> ${show(d.proposed)}${which}`
}

/** `words` after `head`, in lines of at most 100 characters, the next ones indented. */
function wrapped (head: string, words: readonly string[]): string[] {
  const lines: string[] = []
  let current = head
  for (const [i, word] of words.entries()) {
    const piece = `${word}${i < words.length - 1 ? ',' : ''}`
    if (current.length + 1 + piece.length > 100 && current.trim() !== '') {
      lines.push(current)
      current = `  ${piece}`
    } else current = `${current} ${piece}`
  }
  lines.push(current)
  return lines
}

function reachedCell (o: OperationReport): string {
  if (o.skipped !== undefined) return 'skipped'
  if (!o.reached) return 'no'
  return o.discovered ? 'found' : 'yes'
}

const COLUMNS: Array<[string, number, (o: OperationReport) => string]> = [
  ['operation', 36, o => o.operation],
  ['reached', 8, reachedCell],
  ['status', 7, o => o.status === undefined ? (o.error ?? '') : String(o.status)],
  ['ms', 6, o => o.ms === undefined ? '' : String(o.ms)],
  ['calls', 6, o => String(o.calls)],
  ['answer key', 24, o => o.answerKey ?? ''],
  ['items', 6, o => o.items === undefined ? '' : String(o.items)],
  ['dates', 22, o => (o.dateForms ?? []).join(', ')],
  ['values', 14, valuesCell],
  ['extra fields', 24, o => (o.extraFields ?? []).join(', ')],
  ['error fields', 18, o => (o.errorFields ?? []).join(', ')],
  ['differs', 8, o => o.skipped !== undefined ? '' : String(o.differences.length)]
]

/**
 * The report for people: what explains most first, one line per operation,
 * then each difference with the member that explains it, and what the
 * proposed profile rests on.
 */
export function table (report: ProbeReport): string {
  const { hub, configuredProfile: inForce, login } = report
  const lines: string[] = []
  const logins = login === undefined
    ? ''
    : `; logged in ${login.logins} time(s), renewed ${login.renewals}`
  lines.push(`hub ${hub.hubUrl} (base ${hub.baseUrl}), profile in force ${inForce.name} ` +
    `(${inForce.source}), ${report.calls} of at most ${report.maxCalls} calls${logins}`)
  for (const hint of report.hints) lines.push(`! ${hint}`)
  lines.push('')
  lines.push(COLUMNS.map(([name, width]) => cell(name, width)).join(' ').trimEnd())
  for (const o of report.operations) {
    lines.push(COLUMNS.map(([, width, get]) => cell(get(o), width)).join(' ').trimEnd())
  }
  const skipped = report.operations.filter(o => o.skipped !== undefined)
  if (skipped.length > 0) {
    lines.push('')
    lines.push('Not called:')
    for (const o of skipped) lines.push(`  ${o.operation}: ${o.skipped ?? ''}`)
  }
  lines.push('')
  if (!report.drift) lines.push('The hub answers as the profile in force says (exit 0).')
  else {
    lines.push(`${report.differences.length} difference(s), each with the member of the proposed ` +
      'profile that explains it:')
    for (const d of report.differences) lines.push(line(d))
    lines.push('The proposed profile: npm run -s probe-hub -- ... --json, member `profile`' +
      ' (exit 1).')
  }
  lines.push('')
  const { observed: seen, onTrust } = report.members
  lines.push(...wrapped('Observed in the hub\'s answers:', seen.length === 0 ? ['nothing'] : seen))
  const trust = 'Taken on trust from the profile in force (nothing the probe saw confirmed them):'
  lines.push(...wrapped(trust, onTrust.length === 0 ? ['nothing'] : onTrust))
  return `${lines.join('\n')}\n`
}
