import type { HubProfile } from '../profile/schema.ts'
import { differences, proposedOperation, type Difference } from './propose.ts'
import { observed, RANK, type Finding } from './probe.ts'

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
  differences: Difference[]
}

export interface ProbeReport {
  hub: { hubUrl: string, baseUrl: string }
  configuredProfile: { name: string, source: string, digest: string }
  calls: number
  maxCalls: number
  drift: boolean
  /** Whether --discover was on. */
  discovered: boolean
  operations: OperationReport[]
  /** Differences of the whole profile (stringValues). */
  differences: Difference[]
  profile: HubProfile
}

function addressOf (finding: Finding): string | undefined {
  const variant = finding.best?.variant ?? finding.configured
  const query = variant.params.filter(p => !variant.path.includes(`{${p.upstream}}`)).map(p => `${p.upstream}={${p.upstream}}`).join('&')
  return `${variant.prefix}/${variant.path}${query === '' ? '' : `?${query}`}`
}

export function operationReport (finding: Finding, successValues: ReadonlyMap<string, readonly string[]>): OperationReport {
  const best = finding.best
  if (finding.skipped !== undefined || best === undefined) {
    return { operation: finding.op.id, reached: false, skipped: finding.skipped ?? 'not called', calls: finding.calls, discovered: false, differences: [] }
  }
  const seen = observed(finding)
  const reached = best.rank >= RANK.empty
  return {
    operation: finding.op.id,
    reached,
    ...(best.result.status === undefined ? {} : { status: best.result.status }),
    ...(best.result.error === undefined ? {} : { error: best.result.error }),
    ms: best.result.ms,
    calls: finding.calls,
    ...(reached ? { address: addressOf(finding) } : {}),
    discovered: best !== finding.first,
    ...(seen.answerKey === undefined ? {} : { answerKey: seen.answerKey }),
    ...(best.located === undefined ? {} : { items: seen.items, extraFields: seen.extraFields, dateForms: seen.dateForms }),
    ...(seen.valueForms === undefined ? {} : { valueForms: seen.valueForms }),
    errorFields: seen.errorFields,
    differences: differences(finding.op.id, finding.configured, proposedOperation(finding, successValues))
  }
}

/** Whether the hub differs from the profile in force: a setting to change, or an operation called and not reached. */
export function isDrift (operations: readonly OperationReport[], whole: readonly Difference[]): boolean {
  return whole.length > 0 || operations.some(o => o.differences.length > 0 || (o.skipped === undefined && !o.reached))
}

function cell (value: string, width: number): string {
  return value.length > width ? `${value.slice(0, width - 1)}…` : value.padEnd(width)
}

function show (value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** The report for people: one line per operation, then each difference with the setting that explains it. */
export function table (report: ProbeReport): string {
  const lines: string[] = []
  lines.push(`hub ${report.hub.hubUrl} (base ${report.hub.baseUrl}), profile in force ${report.configuredProfile.name} (${report.configuredProfile.source}), ${report.calls} of at most ${report.maxCalls} calls`)
  lines.push('')
  const columns: Array<[string, number, (o: OperationReport) => string]> = [
    ['operation', 36, o => o.operation],
    ['reached', 8, o => o.skipped !== undefined ? 'skipped' : o.reached ? (o.discovered ? 'found' : 'yes') : 'no'],
    ['status', 7, o => o.status === undefined ? (o.error ?? '') : String(o.status)],
    ['ms', 6, o => o.ms === undefined ? '' : String(o.ms)],
    ['calls', 6, o => String(o.calls)],
    ['answer key', 24, o => o.answerKey ?? ''],
    ['items', 6, o => o.items === undefined ? '' : String(o.items)],
    ['dates', 22, o => (o.dateForms ?? []).join(', ')],
    ['values', 14, o => o.valueForms === undefined ? '' : [o.valueForms.numbersAsStrings > 0 ? 'num-as-str' : '', o.valueForms.nullStrings > 0 ? '"null"' : '', o.valueForms.emptyStrings > 0 ? '""' : ''].filter(Boolean).join(' ')],
    ['extra fields', 24, o => (o.extraFields ?? []).join(', ')],
    ['error fields', 18, o => (o.errorFields ?? []).join(', ')],
    ['differs', 8, o => o.skipped !== undefined ? '' : String(o.differences.length)]
  ]
  lines.push(columns.map(([name, width]) => cell(name, width)).join(' ').trimEnd())
  for (const o of report.operations) lines.push(columns.map(([, width, get]) => cell(get(o), width)).join(' ').trimEnd())
  const all = [...report.differences, ...report.operations.flatMap(o => o.differences)]
  const skipped = report.operations.filter(o => o.skipped !== undefined)
  if (skipped.length > 0) {
    lines.push('')
    lines.push('Not called:')
    for (const o of skipped) lines.push(`  ${o.operation}: ${o.skipped ?? ''}`)
  }
  lines.push('')
  if (all.length === 0 && !report.drift) lines.push('The hub answers as the profile in force says (exit 0).')
  else {
    lines.push('Differences, each with the profile setting that explains it:')
    for (const d of all) lines.push(`  ${d.setting}: ${show(d.configured)} -> ${show(d.proposed)}`)
    for (const o of report.operations) if (o.skipped === undefined && !o.reached) lines.push(`  ${o.operation}: not reached (${o.error ?? `status ${o.status ?? '?'}`})${report.discovered ? '; no variant tried answered' : '; --discover tries the known variants'}`)
    lines.push('The proposed profile: npm run probe-hub -- ... --json, member `profile` (exit 1).')
  }
  return `${lines.join('\n')}\n`
}
