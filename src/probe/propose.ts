import { OPERATIONS, type OperationId } from '../catalogue/operations.ts'
import type { ResourceSpec } from '../catalogue/resource-spec.ts'
import type { Area, HubOperation } from '../catalogue/types.ts'
import type { OperationProfile, ProfileInForce } from '../profile/resolve.ts'
import { entryOf, resolveOperation } from '../profile/resolve.ts'
import {
  DATE_ANSWERED, type HubProfile, type ProfileFailure, type ProfileOperation, type ProfileSettings
} from '../profile/schema.ts'
import { byUsualName, errorShape, stateMembers, textAt, type Json } from './observe.ts'
import { observed, RANK, type Finding } from './probe.ts'
import { unique } from './variants.ts'

/**
 * The profile the probe proposes. First each operation's behaviour: as it
 * was reached (address, credentials' headers, parameters' places, date form
 * sent) and as it answered (answer key, date form answered), with what the
 * hub showed across its operations (the members its errors carry their text
 * in, "null" strings, a failure rule from an envelope's state member); the
 * operations it did not reach, and the writes, as the profile in force has
 * them. Then that behaviour written as a profile: what operations share in
 * `prefixes` and `defaults`, each operation's entry only where it differs.
 */

/** One setting that differs between the profile in force and what the hub showed. */
export interface Difference {
  /** The member of the proposed profile that says it (docs/reference/profile.md names them). */
  setting: string
  configured: unknown
  proposed: unknown
  /** The operations it concerns. */
  operations?: string[]
  /** `configured` is each operation's value, by operation: they were not all the same. */
  configuredEach?: true
  /** For an operation not reached: what it answered instead. */
  note?: string
}

/** What the hub showed across its operations. */
export interface HubEvidence {
  /** The bodies of its answers without data (errors, 2xx answers reporting one). */
  errors: Json[]
  /** Where its error answers carry their text, the usual names first; undefined: no text seen. */
  errorFields: string[] | undefined
  /** A state member beside the data, seen as success with data and otherwise without. */
  failure: { field: string, successValues: string[] } | undefined
  /** State members seen beside the data only as success: no failure rule from them. */
  onlySuccess: Array<{ field: string, values: string[] }>
  /** "null" strings seen in the data. */
  nullStrings: boolean
  /** The one form every answer with days with a time of day sent them in, if they agreed. */
  dateAnswered: OperationProfile['dateAnswered'] | undefined
  /** The one date form of every operation that answered data to a date sent, if they agreed. */
  dateSent: OperationProfile['dateSent'] | undefined
  stringValues: boolean
}

const ANSWERED = new Set<string>(DATE_ANSWERED)
const CATALOGUE = OPERATIONS as readonly HubOperation[]

function same (a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/** Whether a spec has a day the hub sends with a time of day, at any depth. */
function hasStampedDays (spec: ResourceSpec): boolean {
  return spec.fields.some(({ kind }) => {
    if (kind === 'date-with-time') return true
    if (typeof kind !== 'object') return false
    if (!('arrayOf' in kind)) return hasStampedDays(kind)
    return typeof kind.arrayOf === 'object' && hasStampedDays(kind.arrayOf)
  })
}

/**
 * Whether a member says anything about how the gateway calls or reads `op`
 * under `entry`: a key header's name for an operation sent no key, the date
 * form of one that sends no date or answers no day with a time of day, do
 * not; their values follow the defaults.
 */
function relevant (op: HubOperation, name: keyof ProfileOperation, entry: ProfileOperation)
  : boolean {
  switch (name) {
    case 'apiKeyHeader': return entry.credentials?.includes('apiKey') ?? true
    case 'tokenHeader': return entry.credentials?.includes('token') ?? true
    case 'dateSent': return entry.params === undefined || 'blDate' in entry.params
    case 'dateAnswered': return hasStampedDays(op.response.item)
    default: return true
  }
}

/** Two entries of `op` that say the same, member by member (in any order), where it matters. */
function sameEntry (op: HubOperation, a: ProfileOperation, b: ProfileOperation): boolean {
  const names = unique([...Object.keys(a), ...Object.keys(b)]) as Array<keyof ProfileOperation>
  return names.every(name =>
    same(a[name], b[name]) || (!relevant(op, name, a) && !relevant(op, name, b)))
}

function reached (finding: Finding): boolean {
  return finding.best !== undefined && finding.best.rank >= RANK.empty
}

/** The error members seen in `bodies`, the usual names first, at most 8 (the schema's bound). */
function errorFieldsOf (bodies: readonly Json[]): string[] {
  return byUsualName(unique(bodies.flatMap(body => errorShape(body)))).slice(0, 8)
}

/** What the hub showed across the operations probed (and its answer to no operation). */
export function hubEvidence (findings: readonly Finding[], baselineErrors: readonly Json[])
  : HubEvidence {
  const errors = [...findings.flatMap(f => f.errors), ...baselineErrors]
  const fields = errorFieldsOf(errors)
  const succeeded = new Map<string, string[]>()
  for (const { field, value } of findings.flatMap(f => f.succeeded)) {
    const word = value.trim().toLowerCase()
    succeeded.set(field, unique([...(succeeded.get(field) ?? []), word]))
  }
  const failedWords = new Map<string, Set<string>>()
  const failed = [...findings.flatMap(f => f.failed), ...baselineErrors.flatMap(stateMembers)]
  for (const { field, value } of failed) {
    failedWords.set(field, (failedWords.get(field) ?? new Set()).add(value.trim().toLowerCase()))
  }
  let failure: HubEvidence['failure']
  const onlySuccess: HubEvidence['onlySuccess'] = []
  for (const [field, values] of succeeded) {
    const other = [...failedWords.get(field) ?? []].filter(word => !values.includes(word))
    if (other.length === 0) onlySuccess.push({ field, values })
    else failure ??= { field, successValues: values.slice(0, 16) }
  }
  const seen = findings.map(f => observed(f))
  const answered = unique(seen.flatMap(o => o.dateForms))
  const sent = unique(findings
    .filter(f => f.best !== undefined && f.best.rank >= RANK.data)
    .filter(f => f.best!.variant.params.some(p => p.kind === 'blDate'))
    .map(f => f.best!.variant.dateSent))
  const day = answered.length === 1 && ANSWERED.has(answered[0]!) ? answered[0] : undefined
  return {
    errors,
    errorFields: fields.length === 0 ? undefined : fields,
    failure,
    onlySuccess,
    nullStrings: seen.some(o => (o.valueForms?.nullStrings ?? 0) > 0),
    stringValues: seen.some(o => (o.valueForms?.numbersAsStrings ?? 0) > 0),
    dateAnswered: day as HubEvidence['dateAnswered'],
    dateSent: sent.length === 1 ? sent[0] : undefined
  }
}

/** Whether the data was found where `configured` says (`*`: the only array; none: the answer). */
function keyFits (op: HubOperation, found: string | undefined, configured: string | undefined)
  : boolean {
  if (found === configured) return true
  if (configured === '*') return true
  // The answer itself: a bare list where the profile names no key, a record answered as itself.
  return found === '*' ? configured === undefined && op.response.type !== 'keyed-list' : false
}

/** The failure rule for an operation reached with data, from what its answers showed. */
function failureOf (finding: Finding, hub: HubEvidence): ProfileFailure | undefined {
  const { configured } = finding
  const failure = configured.failure
  const best = finding.best!
  const key = best.located?.key
  const envelope = key !== undefined && key !== '*'
  const statusField = failure?.statusField
  if (statusField !== undefined) {
    const value = textAt(best.result.body, statusField)
    if (value === undefined || best.located === undefined) return failure
    // A rule that reads a record's own state: the record says what it is, not how the call went.
    const inside = !envelope || statusField.split('.')[0] === key
    if (inside) {
      const { statusField: _field, successValues: _values, ...rest } = failure!
      return Object.keys(rest).length === 0 ? undefined : rest
    }
    const word = value.trim().toLowerCase()
    const words = failure!.successValues ?? ['success']
    if (words.some(w => w.trim().toLowerCase() === word)) return failure
    // An answer with its data in it: its state is one of the hub's words for success.
    return { ...failure, successValues: [...words, word].slice(0, 16) }
  }
  const rule = hub.failure
  if (rule === undefined || !finding.succeeded.some(s => s.field === rule.field)) return failure
  return { ...failure, statusField: rule.field, successValues: rule.successValues }
}

/** Whether `fields` find the text of every error answer that has one. */
function errorFieldsFit (bodies: readonly Json[], fields: readonly string[]): boolean {
  return bodies.every(body =>
    errorShape(body).length === 0 || fields.some(f => textAt(body, f) !== undefined))
}

/**
 * An operation with what the hub showed across its operations: a hub answers
 * its errors the same way everywhere, so the members its error answers were
 * seen to carry text in come first wherever the profile in force would miss
 * one; "null" strings seen anywhere are null everywhere, and so are the date
 * forms every operation that showed one agreed on.
 */
export function withHub (base: OperationProfile, hub: HubEvidence): OperationProfile {
  let out = base
  if (hub.dateAnswered !== undefined) out = { ...out, dateAnswered: hub.dateAnswered }
  if (hub.dateSent !== undefined) out = { ...out, dateSent: hub.dateSent }
  if (hub.errorFields !== undefined && !errorFieldsFit(hub.errors, base.errorFields)) {
    out = { ...out, errorFields: unique([...hub.errorFields, ...base.errorFields]).slice(0, 8) }
  }
  if (hub.nullStrings && !base.nullStrings.includes('null')) {
    out = { ...out, nullStrings: [...base.nullStrings, 'null'] }
  }
  return out
}

/** An operation as the probe found it, with what the hub showed across operations. */
export function proposedOperation (finding: Finding, hub: HubEvidence): OperationProfile {
  const { configured, op } = finding
  if (!reached(finding)) return withHub(configured, hub)
  const best = finding.best!
  const seen = observed(finding)
  let proposed: OperationProfile = { ...best.variant }
  const found = best.located?.key
  if (best.located !== undefined && !keyFits(op, found, configured.answerKey)) {
    const bare = found === '*' && op.response.type !== 'keyed-list'
    proposed = { ...proposed, answerKey: bare ? undefined : found }
  }
  const form = seen.dateForms.length === 1 ? seen.dateForms[0]! : undefined
  if (form !== undefined && ANSWERED.has(form) && form !== configured.dateAnswered) {
    proposed = { ...proposed, dateAnswered: form as OperationProfile['dateAnswered'] }
  }
  if (best.located !== undefined) proposed = { ...proposed, failure: failureOf(finding, hub) }
  // Per operation only where its own errors say otherwise than the hub's.
  const own = withHub(proposed, hub)
  if (errorFieldsFit(finding.errors, own.errorFields)) return own
  const fields = unique([...errorFieldsOf(finding.errors), ...own.errorFields]).slice(0, 8)
  return { ...own, errorFields: fields }
}

/** The settings a profile's `defaults` may hold, and the operations each applies to there. */
const SHARED = [
  'apiKeyHeader', 'tokenHeader', 'dateSent', 'dateAnswered', 'errorFields', 'nullStrings',
  'answerKey', 'failure', 'notFound', 'timeouts'
] as const
type Shared = typeof SHARED[number]

function isList (op: HubOperation): boolean {
  return op.response.type !== 'record'
}

/** The documented reading of an operation's parameters and credentials (its catalogue entry). */
function catalogueEntry (op: HubOperation)
  : Pick<ProfileOperation, 'service' | 'path' | 'params' | 'credentials'> {
  return {
    service: op.service,
    path: op.path,
    params: Object.fromEntries(op.params.map(p => [p.name, p.upstream])),
    credentials: op.headers.map(h => h === 'authorization' ? 'token' : 'apiKey')
  }
}

/** Each area's commonest prefix among `ops`. */
function prefixesOf (ops: readonly HubOperation[], entry: (op: HubOperation) => ProfileOperation)
  : Partial<Record<Area, string>> {
  const prefixes: Partial<Record<Area, string>> = {}
  for (const area of unique(ops.map(op => op.area))) {
    const inArea = ops.filter(op => op.area === area)
    prefixes[area] = commonest(inArea.map(op => entry(op).prefix)) as string
  }
  return prefixes
}

/** The most common value, by JSON; ties to the first seen. */
function commonest (values: readonly unknown[]): unknown {
  const counts = new Map<string, { value: unknown, n: number }>()
  for (const value of values) {
    const key = JSON.stringify(value)
    const at = counts.get(key) ?? { value, n: 0 }
    at.n++
    counts.set(key, at)
  }
  let best: { value: unknown, n: number } | undefined
  for (const at of counts.values()) if (best === undefined || at.n > best.n) best = at
  return best?.value
}

/**
 * An operation's entry in a profile with these prefixes and defaults, as the
 * gateway reads one (profile/resolve.ts: its entry, else the defaults, else
 * the documented reading): what `group` writes is checked against it.
 */
function expand (op: HubOperation, profile: HubProfile): ProfileOperation {
  return entryOf(resolveOperation(op, profile))
}

/**
 * The behaviour of every operation as a profile: each area's commonest
 * prefix in `prefixes`, each setting's commonest value in `defaults` (one
 * that every operation it applies to can state otherwise), and per operation
 * only what differs. An entry that would not read back as the behaviour
 * (checked with `expand`) is written out in full.
 */
export function group (
  entries: ReadonlyMap<OperationId, ProfileOperation>,
  head: Omit<HubProfile, 'prefixes' | 'defaults' | 'operations'>
): HubProfile {
  const ops = CATALOGUE.filter(op => entries.has(op.id as OperationId))
  const entry = (op: HubOperation): ProfileOperation => entries.get(op.id as OperationId)!
  const prefixes = prefixesOf(ops, entry)
  const defaults: ProfileSettings = {}
  for (const name of SHARED) {
    const scope = name === 'answerKey' || name === 'notFound' ? ops.filter(isList) : ops
    const values = scope.map(op => entry(op)[name])
    // A default an operation could not undo (it has none of its own): not a default.
    if (values.some(v => v === undefined)) continue
    const value = commonest(values)
    if (value !== undefined) Object.assign(defaults, { [name]: value })
  }
  const profile: HubProfile = { ...head, prefixes, defaults, operations: {} }
  const operations: Record<string, ProfileOperation> = {}
  for (const op of ops) {
    const full = entry(op)
    const documented = catalogueEntry(op)
    const own: ProfileOperation = {}
    const given = (name: keyof ProfileOperation, value: unknown): void => {
      if (same(full[name], value) || !relevant(op, name, full)) return
      Object.assign(own, { [name]: full[name] })
    }
    given('service', documented.service)
    given('prefix', prefixes[op.area])
    given('path', documented.path)
    given('params', documented.params)
    given('credentials', documented.credentials)
    for (const name of SHARED) {
      if (name === 'answerKey') {
        const documentedKey = op.response.type === 'keyed-list' ? op.response.key : undefined
        given(name, (isList(op) ? defaults.answerKey : undefined) ?? documentedKey)
      } else if (name === 'notFound') {
        given(name, isList(op) ? defaults.notFound ?? 'empty' : undefined)
      } else given(name, defaults[name as Exclude<Shared, 'answerKey' | 'notFound'>])
    }
    operations[op.id] = own
    if (!sameEntry(op, expand(op, { ...profile, operations }), full)) operations[op.id] = full
    if (Object.keys(operations[op.id]!).length === 0) delete operations[op.id]
  }
  return { ...profile, operations }
}

/** The member of `profile` that gives `op` its `name`. */
function memberOf (op: HubOperation, name: keyof ProfileOperation, profile: HubProfile): string {
  if (profile.operations?.[op.id]?.[name] !== undefined) return `operations.${op.id}.${name}`
  if (name === 'prefix') return `prefixes.${op.area}`
  const defaults = profile.defaults as Record<string, unknown> | undefined
  const inDefaults = defaults?.[name] !== undefined && (name !== 'answerKey' || isList(op))
  if (inDefaults) return `defaults.${name}`
  return `operations.${op.id}.${name}`
}

/**
 * Where the proposed behaviour differs from the profile in force, each with
 * the member of the proposed profile that says it: one line for what several
 * operations share, naming them (and what each had, when that differed).
 */
export function differences (
  configured: ReadonlyMap<OperationId, OperationProfile>,
  proposed: ReadonlyMap<OperationId, ProfileOperation>,
  profile: HubProfile
): Difference[] {
  const rows = new Map<string, Difference & { each: Map<string, unknown> }>()
  for (const op of CATALOGUE) {
    const id = op.id as OperationId
    const before = entryOf(configured.get(id)!)
    const after = proposed.get(id)!
    const names = unique([...Object.keys(before), ...Object.keys(after)])
    for (const name of names as Array<keyof ProfileOperation>) {
      if (same(before[name], after[name])) continue
      if (!relevant(op, name, before) && !relevant(op, name, after)) continue
      const setting = memberOf(op, name, profile)
      const key = JSON.stringify([setting, after[name]])
      const row = rows.get(key) ?? {
        setting,
        configured: before[name],
        proposed: after[name],
        operations: [] as string[],
        each: new Map<string, unknown>()
      }
      row.operations!.push(op.id)
      row.each.set(op.id, before[name])
      rows.set(key, row)
    }
  }
  return [...rows.values()].map(({ each, ...row }) => {
    const values = unique([...each.values()].map(v => JSON.stringify(v) ?? 'undefined'))
    if (values.length === 1) return row
    return { ...row, configured: Object.fromEntries(each), configuredEach: true as const }
  })
}

/** The behaviour the probe proposes, the profile that says it, and what it rests on. */
export interface Proposal {
  profile: HubProfile
  /** Each operation's entry, written out in full. */
  behaviour: Map<OperationId, ProfileOperation>
  hub: HubEvidence
  /** stringValues, when the hub's differs from the profile in force. */
  whole: Difference[]
}

/** What the operations reached share, where they show it; else what `before` says. */
function shared (reached: ReadonlyMap<OperationId, ProfileOperation>, before: HubProfile)
  : Pick<HubProfile, 'prefixes' | 'defaults'> {
  const ops = CATALOGUE.filter(op => reached.has(op.id as OperationId))
  const entry = (op: HubOperation): ProfileOperation => reached.get(op.id as OperationId)!
  const prefixes = { ...before.prefixes, ...prefixesOf(ops, entry) }
  const defaults: ProfileSettings = { ...before.defaults }
  for (const name of Object.keys(defaults) as Shared[]) {
    const users = ops.filter(op => relevant(op, name, entry(op)))
      .filter(op => name !== 'answerKey' || isList(op))
    const value = commonest(users.map(op => entry(op)[name]).filter(v => v !== undefined))
    if (value !== undefined) Object.assign(defaults, { [name]: value })
  }
  return { prefixes, defaults }
}

export function proposeProfile (
  inForce: ProfileInForce,
  findings: readonly Finding[],
  baselineErrors: readonly Json[],
  hubUrl: string
): Proposal {
  const hub = hubEvidence(findings, baselineErrors)
  const reachedOps = new Map<OperationId, ProfileOperation>()
  for (const finding of findings) {
    if (!reached(finding)) continue
    reachedOps.set(finding.op.id as OperationId, entryOf(proposedOperation(finding, hub)))
  }
  // The operations not reached (the writes among them) keep what the profile in force says of
  // each of them, and take what it says of all (the area's prefix, the defaults) as the hub
  // showed it.
  const inForceEntries = [...inForce.operations]
    .map(([id, op]) => [id, entryOf(withHub(op, hub))] as const)
  const before = group(new Map(inForceEntries), { name: inForce.name })
  const now = { ...before, ...shared(reachedOps, before) }
  const behaviour = new Map<OperationId, ProfileOperation>()
  for (const op of CATALOGUE) {
    const id = op.id as OperationId
    const own = { ...now, operations: { [id]: before.operations?.[id] ?? {} } }
    behaviour.set(id, reachedOps.get(id) ?? expand(op, own))
  }
  const stringValues = inForce.stringValues || hub.stringValues
  const name = `${inForce.name}-probed`.slice(0, 64)
  const profile = group(behaviour, {
    name,
    description: `Proposed by npm run probe-hub from the profile ${inForce.name} ` +
      `(${inForce.source}) and the answers of ${hubUrl}. What the probe did not see is that ` +
      'profile\'s; its report says which members were observed and which are taken on trust.',
    tokenScheme: inForce.tokenScheme,
    stringValues,
    login: inForce.login,
    // How the gateway calls the hub is the profile in force's: kept as it is.
    timeZone: inForce.timeZone,
    connections: inForce.connections,
    retries: inForce.retries,
    breaker: inForce.breaker
  })
  const whole = stringValues === inForce.stringValues
    ? []
    : [{ setting: 'stringValues', configured: inForce.stringValues, proposed: stringValues }]
  return { profile, behaviour, hub, whole }
}
