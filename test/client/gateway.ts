import { randomBytes } from 'node:crypto'
import { SCOPES } from '../../src/catalogue/scopes.ts'
import { build, type Built, type TestClient } from '../helpers/helper.ts'

/** The subset of a tap `Test` the helpers use. */
interface TestLike { teardown (fn: () => unknown): void }

export interface ListeningGateway extends Built {
  /** `http://127.0.0.1:<port>`, what a web app puts in `baseUrl`. */
  baseUrl: string
  /** A client key with every scope. */
  key: string
}

/** A client key as `npm run client-key` makes them: `cgw_` and 43 base64url characters. */
export function newClientKey (): string {
  return `cgw_${randomBytes(32).toString('base64url')}`
}

export interface GatewayOptions {
  /** Environment variables, as the gateway would read them. */
  env?: Record<string, string>
  /** Further clients of CLIENTS_FILE. */
  clients?: TestClient[]
  /** The key of the client with every scope (default: a new one). */
  key?: string
  /** Default: a free port. */
  port?: number
}

/**
 * The gateway on the sandbox, listening on a loopback port (a client needs a
 * real address), with authentication on: one client holding every scope.
 */
export async function listeningGateway (
  t: TestLike,
  options: GatewayOptions = {}
): Promise<ListeningGateway> {
  const key = options.key ?? newClientKey()
  const built = await build(t, {
    clients: [{ name: 'web-app', key, scopes: [...SCOPES] }, ...(options.clients ?? [])],
    ...(options.env === undefined ? {} : { env: options.env })
  })
  await built.app.listen({ port: options.port ?? 0, host: '127.0.0.1' })
  const { port } = built.app.server.address() as { port: number }
  return { ...built, baseUrl: `http://127.0.0.1:${port}`, key }
}
