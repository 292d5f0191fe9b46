import type { Config } from './load.ts'

/** Loopback hosts as URL.hostname writes them: traffic to them never leaves the machine. */
const LOOPBACK =
  /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\])$/i

export function isLoopback (hostname: string): boolean {
  return LOOPBACK.test(hostname)
}

/**
 * One warning per hub address over plain `http://` to another machine: the
 * gateway sends the hub's API key and token there unencrypted. Allowed (an
 * internal network, or TLS ended by a sidecar), but never without a word.
 */
export function plainHttpWarnings (
  config: Config
): Array<{ setting: string; host: string; message: string }> {
  const addresses: Array<[string, string | undefined]> = [
    ['UPSTREAM_HUB_URL', config.UPSTREAM_HUB_URL],
    // The login is under one of them (the hub profile's login.service).
    ['UPSTREAM_BASE_URL', config.UPSTREAM_BASE_URL]
  ]
  const warnings = []
  for (const [setting, address] of addresses) {
    if (address === undefined || !URL.canParse(address)) continue
    const url = new URL(address)
    if (url.protocol !== 'http:' || isLoopback(url.hostname)) continue
    warnings.push({
      setting,
      host: url.host,
      message: `${setting} is plain http:// to ${url.host}: the hub's credentials cross the ` +
        'network unencrypted (use https://)'
    })
  }
  return warnings
}
