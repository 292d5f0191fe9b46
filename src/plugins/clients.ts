import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { GatewayConfig } from '../config/resolve.ts'
import { createClientRegistry, loadClientsFile, presentedKey, type AuthenticatedClient, type ClientRegistry } from '../auth/clients.ts'
import { ConfigError } from '../config/load.ts'

declare module 'fastify' {
  interface FastifyInstance {
    /** The clients of CLIENTS_FILE; null when authentication is off (sandbox without CLIENTS_FILE). */
    clients: ClientRegistry | null
  }
  interface FastifyRequest {
    /** The caller its key identifies; null when it sent none, an unknown one, or authentication is off. */
    client: AuthenticatedClient | null
  }
}

export interface ClientsOptions {
  config: GatewayConfig
  /** True when the upstream is the built-in sandbox: only then may authentication be off. */
  sandbox: boolean
}

export const CLIENTS_FILE_REQUIRED = 'CLIENTS_FILE: is required when an upstream is configured ' +
  '(see docs/deployment.md#clients-and-keys)'

/**
 * Who is calling: the clients file, read once at start-up, and each request's
 * client, resolved from its key before anything else looks at it (the rate
 * limiter keys on it, the scope check and the audit log read it).
 */
async function clients (app: FastifyInstance, { config, sandbox }: ClientsOptions) {
  if (config.CLIENTS_FILE === undefined && !sandbox) throw new ConfigError([CLIENTS_FILE_REQUIRED])
  const registry = config.CLIENTS_FILE === undefined ? null : createClientRegistry(loadClientsFile(config.CLIENTS_FILE))
  app.decorate('clients', registry)
  app.decorateRequest('client', null)
  if (registry === null) return
  app.addHook('onRequest', (request, _reply, done) => {
    const key = presentedKey(request.headers)
    request.client = key === undefined || key === '' ? null : registry.authenticate(key)
    done()
  })
}

export default fp(clients, { name: 'clients' })
