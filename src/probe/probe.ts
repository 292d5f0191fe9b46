import { OPERATIONS, type OperationId } from '../catalogue/operations.ts'
import type { Area, HubOperation, ParamKind } from '../catalogue/types.ts'
import type { GatewayConfig } from '../config/resolve.ts'
import { toIsoDate } from '../domain/dates.ts'
import type { OperationProfile, ProfileInForce } from '../profile/resolve.ts'
import { buildPath, placementOf } from '../upstream/resolve-operations.ts'
import type { CallResult, HubCalls } from './calls.ts'
import {
  dateForms, envelopeStatus, errorShape, extraFields, stateMembers, locate, valueForms,
  type Json, type Located, type StateMember, type ValueForms
} from './observe.ts'
import type { ProbeOptions } from './options.ts'
import {
  addressVariants, authVariants, fullParams, keyHeaderSets, learn, learnedPrefixes, paramVariants,
  prefixesFor, TOKEN_HEADERS, unique, type Learned
} from './variants.ts'

/**
 * How far a call got: no answer, an address the hub does not know, refused credentials, refused
 * parameters, reached without data, reached with data.
 */
export const RANK = { none: -1, address: 0, auth: 1, params: 2, empty: 2.5, data: 3 } as const

export interface Attempt {
  variant: OperationProfile
  result: CallResult
  rank: number
  located: Located | undefined
}

/** What the probe found of one operation. */
export interface Finding {
  op: HubOperation
  configured: OperationProfile
  /** Why it was not probed (a value it needs was not given, the call bound). */
  skipped: string | undefined
  /** The configured form's call. */
  first: Attempt | undefined
  /** The best call: the configured form's, or the variant --discover found. */
  best: Attempt | undefined
  calls: number
  /** Bodies of the answers without data (errors, 2xx answers reporting one), for their shape. */
  errors: Json[]
  /** The envelope's state members beside the data of answers with data: words for success. */
  succeeded: StateMember[]
  /** The same members in the answers without data: the hub's words for a failure. */
  failed: StateMember[]
}

export interface ProbeRun {
  findings: Finding[]
  calls: number
  /** The hub's answers to the address that names no operation (its own error form, hub-wide). */
  baselineErrors: Json[]
  /**
   * The areas where no operation called was found at any address tried: each
   * was answered as the address that names no operation (an unknown prefix).
   */
  unknownPrefixes: Area[]
  /** The hub could not be reached at all. */
  unreachable: string | undefined
}

/** The operations the probe calls: the lookups (GET) only, never a write. */
export const READ_OPERATIONS: readonly HubOperation[] = (
  OPERATIONS as readonly HubOperation[]
).filter((op) => op.method === 'GET' && op.kind !== 'write')

const NO_SUCH_OPERATION = 'probe-hub-no-such-operation'

interface Baseline { status: number | undefined, text: string }

/** The Authorization value for the next call (a login's token is renewed as it expires). */
export type TokenSource = () => Promise<string>

function serviceUrl (config: GatewayConfig, service: HubOperation['service']): URL {
  return new URL(service === 'hub' ? config.UPSTREAM_HUB_URL : config.UPSTREAM_BASE_URL)
}

function rankOf (
  op: HubOperation,
  variant: OperationProfile,
  result: CallResult,
  baseline: Baseline | undefined
): { rank: number; located: Located | undefined } {
  const { status } = result
  if (status === undefined) return { rank: RANK.none, located: undefined }
  if (status >= 200 && status < 300) {
    const located = locate(op, result.body, variant.answerKey)
    if (located === undefined) return { rank: RANK.params, located }
    return { rank: located.items.length > 0 ? RANK.data : RANK.empty, located }
  }
  if (status === 401 || status === 403) return { rank: RANK.auth, located: undefined }
  const likeBaseline =
    baseline !== undefined && status === baseline.status && result.text === baseline.text
  if (status === 404 || status === 405) {
    return { rank: likeBaseline || status === 405 ? RANK.address : RANK.empty, located: undefined }
  }
  return { rank: likeBaseline ? RANK.address : RANK.params, located: undefined }
}

/**
 * One probe of the configured hub: per read operation, its configured form, then (--discover)
 * variants until one answers.
 */
export async function probeHub (
  config: GatewayConfig, inForce: ProfileInForce, options: ProbeOptions, calls: HubCalls,
  token: TokenSource
): Promise<ProbeRun> {
  const values: Partial<Record<ParamKind, string>> = { ...options.values }
  const learned: Learned = {
    prefixes: new Map(), keyHeaders: undefined, tokenHeader: undefined, dateSent: undefined
  }
  const baselines = new Map<string, Baseline>()
  const baselineErrors: Json[] = []
  /** Areas where an operation was reached, and where --discover found no address at all. */
  const reachedAreas = new Set<Area>()
  const lostAreas = new Set<Area>()

  const headersOf = async (variant: OperationProfile): Promise<Record<string, string>> => {
    const headers: Record<string, string> = {
      accept: 'application/json', 'user-agent': 'customs-gateway-probe'
    }
    if (variant.credentials.apiKey) {
      for (const name of variant.apiKeyHeaders) {
        headers[name.toLowerCase()] = config.UPSTREAM_API_KEY
      }
    }
    if (variant.credentials.token) headers[variant.tokenHeader.toLowerCase()] = await token()
    return headers
  }

  // What a hub address that names no operation answers: a 404 like it means "wrong address",
  // another 404 "not found".
  const baselineOf = async (
    service: HubOperation['service'],
    prefix: string
  ): Promise<Baseline | undefined> => {
    const url = serviceUrl(config, service)
    const key = `${url.origin}${url.pathname}`
    const known = baselines.get(key)
    if (known !== undefined) return known
    const first = inForce.operations.get(READ_OPERATIONS[0]!.id as OperationId)!
    const address = `${url.origin}${url.pathname.replace(/\/$/, '')}${prefix}/${NO_SUCH_OPERATION}`
    const result = await calls.get(address, await headersOf(first))
    if (result === undefined) return undefined
    if (result.body !== undefined) baselineErrors.push(result.body)
    const baseline = { status: result.status, text: result.text }
    baselines.set(key, baseline)
    return baseline
  }

  const findings: Finding[] = []
  let unreachable: string | undefined
  for (const op of READ_OPERATIONS) {
    const configured = inForce.operations.get(op.id as OperationId)!
    const finding: Finding = {
      op,
      configured,
      skipped: undefined,
      first: undefined,
      best: undefined,
      calls: 0,
      errors: [],
      succeeded: [],
      failed: []
    }
    findings.push(finding)
    const missing = configured.params.filter(p => values[p.kind] === undefined).map(p => p.kind)
    if (missing.length > 0) {
      finding.skipped = `needs ${missing.map(kind => FLAGS[kind]).join(', ')}`
      continue
    }
    if (unreachable !== undefined) {
      finding.skipped = 'the hub did not answer'
      continue
    }
    const url = serviceUrl(config, configured.service)
    const root = `${url.origin}`
    const basePath = url.pathname.replace(/\/$/, '')
    const baseline = await baselineOf(configured.service, configured.prefix)

    const attempt = async (variant: OperationProfile): Promise<Attempt | undefined> => {
      const needed = variant.params.filter(p => values[p.kind] === undefined)
      if (needed.length > 0) return undefined
      const path = buildPath(placementOf(variant), values, basePath)
      const result = await calls.get(`${root}${path}`, await headersOf(variant))
      if (result === undefined) return undefined
      finding.calls++
      const { rank, located } = rankOf(op, variant, result, baseline)
      // Words for success only beside data: an empty list's state may say "not found".
      if (located !== undefined) {
        const words = located.items.length > 0 ? envelopeStatus(result.body, located.key) : []
        finding.succeeded.push(...words)
      } else if (result.status !== undefined && result.body !== undefined) {
        finding.errors.push(result.body)
        finding.failed.push(...stateMembers(result.body))
      }
      return { variant, result, rank, located }
    }

    const first = await attempt(configured)
    if (first === undefined) {
      finding.skipped = 'the call bound was reached'
      continue
    }
    finding.first = first
    finding.best = first
    if (
      first.rank === RANK.none &&
      findings.every((f) => f.best === undefined || f.best.rank === RANK.none)
    ) {
      unreachable = first.result.error
      continue
    }
    if (options.discover && first.rank < RANK.empty) {
      // An area where no prefix answered: the operator's and the configured one only, not the
      // whole list again for each of its operations (it would spend the call bound on one area).
      const lost = lostAreas.has(op.area) && !reachedAreas.has(op.area)
      finding.best = await discover(op, first, attempt, learned, options, inForce, lost)
    }
    const best = finding.best
    if (best.rank > RANK.address) reachedAreas.add(op.area)
    else if (options.discover && best.rank === RANK.address) lostAreas.add(op.area)
    if (best.rank >= RANK.empty) learn(learned, op.area, best.variant)
    if (best.rank >= RANK.data) fillFrom(op, best, values)
  }
  const called = findings.filter(f => f.best !== undefined)
  const unknownPrefixes = unique(called.map(f => f.op.area))
    .filter(area => called.every(f => f.op.area !== area || f.best!.rank === RANK.address))
  return { findings, calls: calls.count, baselineErrors, unknownPrefixes, unreachable }
}

export const FLAGS: Readonly<Record<ParamKind, string>> = {
  npwp: '--npwp',
  blNo: '--bl-no',
  blDate: '--bl-date',
  pibNo: '--pib-no',
  containerNo: '--container-no',
  bookingRequestId: '(a write: never probed)',
  sp2Id: '(a write: never probed)'
}

/**
 * A BL list's first entry gives the BL the container lists are probed with, when the operator gave
 * none.
 */
function fillFrom (
  op: HubOperation,
  best: Attempt,
  values: Partial<Record<ParamKind, string>>
): void {
  if (op.kind !== 'bl-list' || values.blNo !== undefined) return
  const item = best.located?.items[0]
  const blNo = item?.bl_no
  const blDate = item?.bl_date
  if (typeof blNo !== 'string' || typeof blDate !== 'string') return
  const day = toIsoDate(blDate)
  // A date the probe cannot read: the lists that need one are skipped, and the operator gives
  // --bl-no and --bl-date.
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return
  values.blNo = blNo
  values.blDate ??= day
}

/**
 * Stage by stage, as far as the hub's answers lead: the address, then the credentials, then the
 * parameters' places and date form.
 */
async function discover (
  op: HubOperation,
  first: Attempt,
  attempt: (variant: OperationProfile) => Promise<Attempt | undefined>,
  learned: Learned,
  options: ProbeOptions,
  inForce: ProfileInForce,
  lost: boolean
): Promise<Attempt> {
  let best = first
  const tried = new Set<string>([key(first.variant)])
  const full = fullParams(op, first.variant.params, OPERATIONS as readonly HubOperation[])
  const withLearned = (variant: OperationProfile): OperationProfile => ({
    ...variant,
    ...(learned.keyHeaders === undefined ? {} : { apiKeyHeaders: learned.keyHeaders }),
    ...(learned.tokenHeader === undefined ? {} : { tokenHeader: learned.tokenHeader }),
    ...(learned.dateSent === undefined ? {} : { dateSent: learned.dateSent })
  })
  /**
   * Tries `variants` in order until one ranks at least `enough`; false when the call bound is
   * reached.
   */
  const run = async (variants: readonly OperationProfile[], enough: number): Promise<boolean> => {
    for (const variant of variants) {
      if (best.rank >= enough) return true
      const k = key(variant)
      if (tried.has(k)) continue
      tried.add(k)
      const next = await attempt(variant)
      if (next === undefined) return false
      if (next.rank > best.rank) best = next
    }
    return true
  }
  const configuredPrefix = first.variant.prefix
  const areaPrefixes = [...inForce.operations.values()].map(o => o.prefix)
  const known = lost ? [] : [...prefixesFor(op.area), ...areaPrefixes]
  const prefixes = unique([
    ...learnedPrefixes(learned, op.area), ...options.tryPrefixes, configuredPrefix, ...known
  ])
  // Learned credentials and date form first: what worked for the operations before.
  if (!await run([withLearned(first.variant)], RANK.data)) return best
  if (
    best.rank < RANK.auth &&
    !(await run(addressVariants(op, withLearned(first.variant), prefixes, full), RANK.auth))
  ) { return best }
  if (best.rank < RANK.auth) return best
  // The operator's names (from the hub's documentation) before the known ones.
  const tokens = unique([
    ...(learned.tokenHeader === undefined ? [] : [learned.tokenHeader]), best.variant.tokenHeader,
    ...options.tryTokenHeaders, ...TOKEN_HEADERS
  ])
  const keySets = unique([
    ...(learned.keyHeaders === undefined ? [] : [learned.keyHeaders]),
    [...best.variant.apiKeyHeaders],
    ...keyHeaderSets(options.tryKeyHeaders)
  ], set => set.join())
  if (
    best.rank < RANK.params &&
    !(await run(authVariants(best.variant, tokens, keySets), RANK.params))
  ) { return best }
  if (best.rank < RANK.params) return best
  const dates = unique([
    ...(learned.dateSent === undefined ? [] : [learned.dateSent]),
    best.variant.dateSent
  ])
  await run(paramVariants(best.variant, full, dates), RANK.data)
  return best
}

function key (variant: OperationProfile): string {
  return JSON.stringify([
    variant.prefix,
    variant.path,
    variant.params.map((p) => p.upstream),
    variant.dateSent,
    variant.credentials,
    variant.tokenHeader,
    variant.apiKeyHeaders
  ])
}

/** What the best answer of an operation shows, for the report. */
export interface Observed {
  answerKey: string | undefined
  items: number
  extraFields: string[]
  dateForms: string[]
  valueForms: ValueForms | undefined
  /** Where the text of its answers without data was. */
  errorFields: string[]
}

export function observed (finding: Finding): Observed {
  const located = finding.best?.located
  const spec = finding.op.response.item
  const items = located?.items ?? []
  return {
    answerKey: located?.key,
    items: items.length,
    extraFields: extraFields(items, spec),
    dateForms: dateForms(items, spec),
    valueForms: located === undefined ? undefined : valueForms(items, spec),
    errorFields: unique(finding.errors.flatMap(body => errorShape(body)))
  }
}
