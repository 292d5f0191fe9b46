import { DATE_ANSWERED, type HubProfile, type ProfileOperation } from '../profile/schema.ts'
import { entryOf, type OperationProfile, type ProfileInForce } from '../profile/resolve.ts'
import { errorFieldsFit, observed, RANK, type Finding } from './probe.ts'

/**
 * The profile the probe proposes: the profile in force, each operation it
 * reached written as it was reached (address, credentials' headers,
 * parameters' places, date form sent) and as it answered (answer key, date
 * form answered, error members, the status member of its 2xx answers, "null"
 * strings). Operations it did not reach keep their settings.
 */

/** One setting that differs between the profile in force and what the hub showed. */
export interface Difference {
  /** The profile member that explains it, as docs/profiles.md names it. */
  setting: string
  configured: unknown
  proposed: unknown
}

const ANSWERED = new Set<string>(DATE_ANSWERED)

/** An operation as the probe found it; undefined when it was not reached. */
export function proposedOperation (finding: Finding, successValues: ReadonlyMap<string, readonly string[]> = new Map()): OperationProfile | undefined {
  const best = finding.best
  if (best === undefined || best.rank < RANK.empty) return undefined
  const seen = observed(finding)
  const { configured, op } = finding
  let proposed: OperationProfile = { ...best.variant }
  const key = best.located?.key
  if (best.located !== undefined && op.response.type !== 'record') {
    const configuredKey = configured.answerKey
    const fits = key === configuredKey || configuredKey === '*' || (configuredKey === undefined && key === '*')
    if (!fits) proposed = { ...proposed, answerKey: key }
  }
  if (seen.dateForms.length === 1 && ANSWERED.has(seen.dateForms[0]!) && seen.dateForms[0] !== configured.dateAnswered) {
    proposed = { ...proposed, dateAnswered: seen.dateForms[0] as OperationProfile['dateAnswered'] }
  }
  if (!errorFieldsFit(finding, configured.errorFields) && seen.errorFields.length > 0) proposed = { ...proposed, errorFields: seen.errorFields.slice(0, 8) }
  if (configured.failure === undefined && seen.status !== undefined) {
    proposed = { ...proposed, failure: { statusField: seen.status.field, successValues: [...(successValues.get(seen.status.field) ?? [seen.status.value.trim().toLowerCase()])] } }
  }
  if ((seen.valueForms?.nullStrings ?? 0) > 0 && !configured.nullStrings.includes('null')) proposed = { ...proposed, nullStrings: [...configured.nullStrings, 'null'] }
  return proposed
}

/** The settings of `proposed` that differ from `configured`, each with the profile member that says it. */
export function differences (id: string, configured: OperationProfile, proposed: OperationProfile | undefined): Difference[] {
  if (proposed === undefined) return []
  const before = entryOf(configured)
  const after = entryOf(proposed)
  const out: Difference[] = []
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)]) as Set<keyof ProfileOperation>) {
    if (JSON.stringify(before[name]) === JSON.stringify(after[name])) continue
    out.push({ setting: `operations.${id}.${name}`, configured: before[name], proposed: after[name] })
  }
  return out
}

/** The values each status member had in the 2xx answers that carried data, lower-cased: a hub may word its success more than one way. */
export function statusValues (findings: readonly Finding[]): Map<string, string[]> {
  const values = new Map<string, string[]>()
  for (const finding of findings) {
    if (finding.best === undefined || finding.best.rank < RANK.empty) continue
    const status = observed(finding).status
    if (status === undefined) continue
    const value = status.value.trim().toLowerCase()
    const list = values.get(status.field) ?? []
    if (!list.includes(value)) list.push(value)
    values.set(status.field, list)
  }
  return values
}

/** Whether the hub sent numbers or flags as strings anywhere. */
function stringValuesSeen (findings: readonly Finding[]): boolean {
  return findings.some(f => (observed(f).valueForms?.numbersAsStrings ?? 0) > 0)
}

/** The proposed profile, whole: every operation written out, as the start-up log shows a profile in force. */
export function proposeProfile (inForce: ProfileInForce, findings: readonly Finding[], hub: string): { profile: HubProfile, stringValues: Difference | undefined } {
  const operations: Record<string, ProfileOperation> = { ...inForce.document.operations }
  const successValues = statusValues(findings)
  for (const finding of findings) {
    const proposed = proposedOperation(finding, successValues)
    if (proposed !== undefined) operations[finding.op.id] = entryOf(proposed)
  }
  const stringValues = inForce.stringValues || stringValuesSeen(findings)
  const name = `${inForce.name}-probed`.slice(0, 64)
  const profile: HubProfile = {
    name,
    description: `Proposed by npm run probe-hub from the profile ${inForce.name} (${inForce.source}) and the answers of ${hub}. Operations it did not reach keep that profile's settings.`,
    tokenScheme: inForce.tokenScheme,
    stringValues,
    login: inForce.login,
    // How the gateway calls the hub is the profile in force's: kept as it is.
    timeZone: inForce.timeZone,
    connections: inForce.connections,
    retries: inForce.retries,
    breaker: inForce.breaker,
    operations
  }
  return { profile, stringValues: stringValues === inForce.stringValues ? undefined : { setting: 'stringValues', configured: inForce.stringValues, proposed: stringValues } }
}
