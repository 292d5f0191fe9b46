import { createRequire } from 'node:module'
import type { AbstractConnector } from 'ioredis'

type Connect = AbstractConnector['connect']

// ioredis does not export the connector it uses by default, and its modules
// have no ESM entry: it is required, and typed by the public base class.
const require = createRequire(import.meta.url)
type ConnectorClass = new (
  options: unknown
) => AbstractConnector & { connect(emitError: Parameters<Connect>[0]): ReturnType<Connect> }
const StandaloneConnector = (
  require('ioredis/built/connectors/StandaloneConnector.js') as { default: ConnectorClass }
).default
const SentinelConnector = (
  require('ioredis/built/connectors/SentinelConnector/index.js') as { default: ConnectorClass }
).default

/**
 * ioredis's own connector, with one more 'error' listener on every socket.
 * ioredis listens for a socket's errors with once(): a TLS socket whose
 * handshake fails can emit a second error (the server's alert after the
 * certificate was refused), which then has no listener and is thrown,
 * ending the process. The first error still reaches ioredis, which reports
 * it and reconnects; later ones of a socket already given up are dropped.
 */
export class GuardedConnector extends StandaloneConnector {
  override async connect (emitError: Parameters<Connect>[0]) {
    const stream = await super.connect(emitError)
    stream.on('error', () => {})
    return stream
  }
}

/**
 * The same guard on ioredis's Sentinel connector (REDIS_SENTINELS): it asks a Sentinel for the
 * master, then connects to it.
 */
export class GuardedSentinelConnector extends SentinelConnector {
  override async connect (emitError: Parameters<Connect>[0]) {
    const stream = await super.connect(emitError)
    stream.on('error', () => {})
    return stream
  }
}
