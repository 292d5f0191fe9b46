// Types and constants shared by the bench runner and its child processes.
// Kept free of imports from src/ so the children start fast and stay
// independent of the gateway under test.

/** The hub addresses the gateway calls (docs/hub.md#operations: BL lists, SP2 documents). */
export const UPSTREAM_BL_PATH = '/V1/HUB/INT/AUTH/noblbc20/'
export const UPSTREAM_SP2_PATH = '/HUB-DEV/document_sp2/host-to-host/'

/**
 * The hub address of a bench route (`/raw/bl`, `/raw/sp2`) and its query, the
 * mapping every hand-made server in the bench does; undefined when a
 * parameter is missing.
 */
export function upstreamPathOf (route: 'bl' | 'sp2', query: Record<string, string | undefined>): string | undefined {
  const { npwp, blNo, blDate } = query
  if (npwp === undefined) return undefined
  if (route === 'bl') return `${UPSTREAM_BL_PATH}?npwp=${encodeURIComponent(npwp)}`
  if (blNo === undefined || blDate === undefined) return undefined
  return `${UPSTREAM_SP2_PATH}?npwp_cargo_owner=${encodeURIComponent(npwp)}&bl_no=${encodeURIComponent(blNo)}&bl_date=${blDate.replaceAll('-', '')}`
}

/** Readiness addresses of the bench's own processes. */
export const UPSTREAM_READY_PATH = '/__bench/ready'
export const RAW_READY_PATH = '/__bench/ready'

/** Configuration of bench/upstream.ts, passed as a JSON file path in argv[2]. */
export interface UpstreamConfig {
  host: string
  port: number
  latencyMs: number
  jitterMs: number
  /** Lower-case header name of the API key. */
  apiKeyHeader: string
  apiKey: string
  accessToken: string
  /** File holding the noblbc20 answer, served for any NPWP. */
  blListFile: string
  /** host-to-host answers by bl_no; any other BL answers []. */
  sp2Files: Record<string, string>
}

/** Configuration of bench/raw-proxy.ts, passed as JSON in argv[2]. */
export interface RawProxyConfig {
  host: string
  port: number
  upstreamUrl: string
  apiKeyHeader: string
  apiKey: string
  accessToken: string
  /** undici pool size towards the upstream (the gateway gets the same). */
  connections: number
}

/**
 * The reference servers (bench/reference-server.ts), minimal servers that
 * show what the same work costs at the least: `buffer` reads the hub's
 * answer whole and sends it back; `parse` also runs JSON.parse over it and
 * JSON.stringify of `{ data, meta }`, renaming nothing; `cache` answers a
 * repeated URL with the `parse` answer's bytes kept from the first time.
 * `hand-written` (bench/hand-written-server.ts) is the peer a team would
 * write instead of the gateway, which the targets compare the gateway to.
 */
export const REFERENCE_MODES = ['buffer', 'parse', 'hand-written', 'cache'] as const
export type ReferenceMode = typeof REFERENCE_MODES[number]
/** The references measured beside an uncached (or latency) pair, and beside a cached one. */
export const UNCACHED_REFERENCES: readonly ReferenceMode[] = ['buffer', 'parse', 'hand-written']
export const CACHED_REFERENCES: readonly ReferenceMode[] = ['cache']

export interface ReferenceServerConfig extends RawProxyConfig {
  mode: ReferenceMode
}
