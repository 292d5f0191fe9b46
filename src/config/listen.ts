import type { Config } from './load.ts'

/** Every interface, and this machine only. */
export const ANY_HOST = '0.0.0.0'
export const LOOPBACK_HOST = '127.0.0.1'

export interface ListenHost {
  host: string
  /** True when HOST is unset and loopback was chosen because authentication is off. */
  loopbackByDefault: boolean
}

/**
 * Where the gateway listens: HOST when set; unset, every interface when
 * callers authenticate (CLIENTS_FILE), else loopback only, so that the
 * sandbox with authentication off is not offered to the network by default.
 */
export function listenHost (config: Pick<Config, 'HOST' | 'CLIENTS_FILE'>): ListenHost {
  if (config.HOST !== undefined) return { host: config.HOST, loopbackByDefault: false }
  return config.CLIENTS_FILE === undefined ? { host: LOOPBACK_HOST, loopbackByDefault: true } : { host: ANY_HOST, loopbackByDefault: false }
}

/** The start-up line that says how to reach a gateway kept on loopback. */
export const LOOPBACK_ADVICE = 'listening on 127.0.0.1 only: HOST is unset and there is no CLIENTS_FILE (client authentication off). ' +
  'To offer the gateway to other machines, set HOST=0.0.0.0 together with a CLIENTS_FILE ' +
  '(keys from npm run client-key; docs/deployment.md#clients-and-keys)'
