import type { Area, HubOperation, ParamKind } from '../catalogue/types.ts'
import type { OperationProfile, ProfileParam } from '../profile/resolve.ts'

/**
 * What --discover tries for an operation that fails as configured: the forms
 * the hub's variants are known to take (docs/hub.md#variants-seen-in-callers),
 * and the operator's own (--try-prefix, --try-key-header,
 * --try-token-header).
 */

export const KEY_HEADERS = ['beacukai-api-key', 'nle-api-key', 'key', 'customs-api-key'] as const
export const TOKEN_HEADERS = ['Authorization', 'Authentication'] as const
/** Address prefixes by area, the likeliest first; then every other area's. */
export const PREFIXES: Readonly<Record<Area, readonly string[]>> = {
  lookup: ['/V1/NLE/INT/AUTH', '/V1/NLE', '/NLEMICROAPI-1.0/webresources/ceisa', '/V3/NLE', '/NLE-DEV'],
  sp2: ['/nlesp2/v1', '/V3/NLE', '/NLE-DEV'],
  booking: ['/nletrucking/v1', '/V3/NLE', '/NLE-DEV']
}

export function prefixesFor (area: Area): string[] {
  return unique([...PREFIXES[area], ...Object.values(PREFIXES).flat()])
}
/** Other names an operation's address is known under. */
export const PATH_ALIASES: Readonly<Record<string, readonly string[]>> = { kontainerbc20: ['kontainerbc20All/'] }
const DATE_SENT = ['YYYYMMDD', 'YYYY-MM-DD'] as const

/**
 * The API-key header sets tried: each name alone (the operator's, from
 * --try-key-header, first), then each two at once.
 */
export function keyHeaderSets (tried: readonly string[] = []): string[][] {
  const names = unique([...tried, ...KEY_HEADERS], name => name.toLowerCase())
  const sets: string[][] = names.map(name => [name])
  for (let i = 0; i < names.length; i++) {
    for (let j = i + 1; j < names.length; j++) sets.push([names[i]!, names[j]!])
  }
  return sets
}

export function unique<T> (values: readonly T[], key: (value: T) => string = String): T[] {
  const seen = new Set<string>()
  return values.filter(value => {
    const k = key(value)
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
}

/** What worked for earlier operations, tried first for the next ones. */
export interface Learned {
  prefixes: Map<string, Map<string, number>>
  keyHeaders: string[] | undefined
  tokenHeader: string | undefined
  dateSent: OperationProfile['dateSent'] | undefined
}

export function learnedPrefixes (learned: Learned, area: string): string[] {
  const counts = learned.prefixes.get(area)
  return counts === undefined ? [] : [...counts].sort((a, b) => b[1] - a[1]).map(([prefix]) => prefix)
}

export function learn (learned: Learned, area: string, found: OperationProfile): void {
  const counts = learned.prefixes.get(area) ?? new Map<string, number>()
  counts.set(found.prefix, (counts.get(found.prefix) ?? 0) + 1)
  learned.prefixes.set(area, counts)
  if (found.credentials.apiKey) learned.keyHeaders = [...found.apiKeyHeaders]
  if (found.credentials.token) learned.tokenHeader = found.tokenHeader
  if (found.params.some(p => p.kind === 'blDate')) learned.dateSent = found.dateSent
}

/** A hub name for a parameter the catalogue lets a profile add: another operation's of the same kind and area, else the kind. */
function hubNameFor (kind: ParamKind, op: HubOperation, catalogue: readonly HubOperation[]): string {
  const likeIt = [...catalogue.filter(o => o.kind === op.kind), ...catalogue.filter(o => o.area === op.area)]
  return likeIt.flatMap(o => o.params).find(p => p.kind === kind)?.upstream ?? kind
}

/** The operation's parameters with those a profile may add, for a hub that takes more than the default reading. */
export function fullParams (op: HubOperation, base: readonly ProfileParam[], catalogue: readonly HubOperation[]): ProfileParam[] {
  const more = (op.alsoTakes ?? []).filter(kind => kind !== 'sp2Id' && kind !== 'bookingRequestId' && !base.some(p => p.kind === kind))
  return [...base, ...more.map(kind => ({ name: kind, upstream: hubNameFor(kind, op, catalogue), kind }))]
}

/** How many of its parameters an operation's path carries. */
export function segmentCount (profile: OperationProfile): number {
  return profile.path.split('/').filter(segment => /^\{.+\}$/.test(segment)).length
}

/** The path without its placeholders (`noblbc20/`), the base of the arrangements. */
export function basePath (profile: OperationProfile): string {
  const fixed = profile.path.split('/').filter(segment => !/^\{.+\}$/.test(segment))
  const text = fixed.join('/')
  return text.endsWith('/') || text === '' ? text : `${text}/`
}

/** `base` with `inPath` as its segments, in that order, and `params` (the others go in the query string). */
export function arrange (profile: OperationProfile, base: string, params: readonly ProfileParam[], inPath: readonly ProfileParam[]): OperationProfile {
  const path = `${base}${inPath.map(p => `{${p.upstream}}`).join('/')}`
  return { ...profile, path, params: [...params] }
}

/** Every ordered choice of `k` of `items`, in a stable order, at most `limit`. */
export function orderedChoices<T> (items: readonly T[], k: number, limit = 24): T[][] {
  const out: T[][] = []
  const walk = (chosen: T[], rest: readonly T[]) => {
    if (out.length >= limit) return
    if (chosen.length === k) {
      out.push(chosen)
      return
    }
    rest.forEach((item, i) => walk([...chosen, item], [...rest.slice(0, i), ...rest.slice(i + 1)]))
  }
  walk([], items)
  return out
}

/** Address variants: prefixes × path names × how many parameters are path segments (the first ones, in order). */
export function addressVariants (op: HubOperation, current: OperationProfile, prefixes: readonly string[], full: readonly ProfileParam[]): OperationProfile[] {
  const bases = unique([basePath(current), op.path, ...(PATH_ALIASES[op.id] ?? [])])
  const counts = unique([segmentCount(current), current.params.length, full.length, 0, ...full.map((_, i) => i + 1)])
  const out: OperationProfile[] = []
  for (const prefix of prefixes) {
    for (const base of bases) {
      for (const k of counts) {
        const params = k <= current.params.length ? current.params : full
        out.push(arrange({ ...current, prefix }, base, params, params.slice(0, k)))
      }
    }
  }
  return out
}

/** Credential variants: token header × API-key header sets, with the configured credentials, then with both sent. */
export function authVariants (current: OperationProfile, tokenHeaders: readonly string[], keySets: ReadonlyArray<readonly string[]>): OperationProfile[] {
  const out: OperationProfile[] = []
  const both = { apiKey: true, token: true }
  for (const credentials of unique([current.credentials, both], c => JSON.stringify(c))) {
    for (const tokenHeader of tokenHeaders) {
      for (const keys of keySets) out.push({ ...current, credentials, tokenHeader, apiKeyHeaders: [...keys] })
    }
  }
  return out
}

/** Parameter variants at the address found: which parameters are its segments and in what order, × the date forms. */
export function paramVariants (current: OperationProfile, full: readonly ProfileParam[], dates: readonly OperationProfile['dateSent'][]): OperationProfile[] {
  const k = segmentCount(current)
  const base = basePath(current)
  const out: OperationProfile[] = []
  const sets = unique([current.params, full], set => set.map(p => p.name).join())
  const forms = unique([...dates, ...DATE_SENT])
  for (const set of sets) {
    if (set.length < k) continue
    for (const inPath of orderedChoices(set, k)) {
      for (const dateSent of set.some(p => p.kind === 'blDate') ? forms : [current.dateSent]) out.push({ ...arrange(current, base, set, inPath), dateSent })
    }
  }
  return out
}
