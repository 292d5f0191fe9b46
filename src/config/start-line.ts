import type { Config } from './load.ts'

/** An address's host and port, never its user or password. */
function hostOf (address: string): string {
  return URL.canParse(address) ? new URL(address).host : 'unknown'
}

/** Where the shared state is: this process's memory, or Redis (its host, or its Sentinels). */
function stateOf (config: Pick<Config, 'REDIS_URL' | 'REDIS_SENTINELS'>): string {
  if (config.REDIS_URL === undefined) return 'memory'
  const sentinels = config.REDIS_SENTINELS
  if (sentinels !== undefined) return `redis via sentinels ${sentinels.replaceAll(' ', '')}`
  return `redis at ${hostOf(config.REDIS_URL)}`
}

/**
 * The start-up line that says what runs: the version, whether it fronts a
 * hub or the built-in sandbox, the hub's hosts and where the state is. The
 * hub profile's line follows it (plugins/hub.ts), then where it listens.
 */
export function startLine (
  config: Pick<Config, 'UPSTREAM_HUB_URL' | 'UPSTREAM_BASE_URL' | 'REDIS_URL' | 'REDIS_SENTINELS'>,
  sandbox: boolean,
  version: string
): { fields: Record<string, string>, message: string } {
  const hosts = [...new Set([config.UPSTREAM_HUB_URL, config.UPSTREAM_BASE_URL]
    .filter(url => url !== undefined).map(hostOf))].join(' and ')
  const mode = sandbox ? 'sandbox' : 'hub'
  const state = stateOf(config)
  const front = sandbox ? `the built-in sandbox at ${hosts}` : `the hub at ${hosts}`
  return {
    fields: { version, mode, hub: hosts, state },
    message: `customs-gateway ${version} in front of ${front}, state in ${state}`
  }
}
