import { isIP } from 'node:net'
import proxyAddr from '@fastify/proxy-addr'

/** What Fastify's `trustProxy` option is given for a TRUST_PROXY value. */
export type TrustProxy = false | string[] | ((address: string, hop: number) => boolean)

const HOPS = /^[1-9][0-9]?$/

/**
 * TRUST_PROXY as Fastify's `trustProxy`. Unset: false, no proxy is believed.
 * Addresses and CIDRs (and proxy-addr's names `loopback`, `linklocal`,
 * `uniquelocal`) are passed on as a list, which Fastify compiles with
 * @fastify/proxy-addr. A hop count is passed as a trust function: Fastify 5
 * no longer honours a plain number (it cannot tell a proxy from a direct
 * caller who forges X-Forwarded-For), and neither can this; it is offered
 * for balancers whose addresses change, where the gateway is reachable
 * through them alone (docs/reference/configuration.md#listening-logging-client-connections).
 */
export function trustProxyOf (value: string | undefined): TrustProxy {
  if (value === undefined) return false
  const text = value.trim()
  if (HOPS.test(text)) {
    const hops = Number(text)
    return (_address, hop) => hop < hops
  }
  return text.split(',').map(item => item.trim())
}

const NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/**
 * Why a TRUST_PROXY value is refused, or undefined. Each address is written
 * in full (node:net isIP): proxy-addr alone would take `0` for 0.0.0.0 and
 * `1.2.3` for 1.2.0.3. proxy-addr then checks the prefix lengths.
 */
export function trustProxyProblem (value: string): string | undefined {
  const trust = trustProxyOf(value)
  if (typeof trust === 'function' || trust === false) return undefined
  const rule = 'TRUST_PROXY: must be a hop count (1-99) or comma-separated addresses or CIDRs'
  const bad = trust.find(item => !NAMES.has(item) && isIP(item.split('/')[0] ?? '') === 0)
  if (bad !== undefined) return `${rule} (not an address: ${JSON.stringify(bad)})`
  try {
    proxyAddr.compile(trust)
    return undefined
  } catch (error) {
    return `${rule} (${error instanceof Error ? error.message : String(error)})`
  }
}
