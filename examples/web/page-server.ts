import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import Fastify from 'fastify'

/**
 * Serves the example page as static files, the way any web server would:
 * the page itself, the built client (clients/typescript/dist, its source
 * maps holding its sources) at /client/, and openapi-fetch's ES module at
 * /vendor/openapi-fetch/. No bundler, no transformation.
 */

const PAGE_DIR = fileURLToPath(new URL('./', import.meta.url))
const PAGE_FILES = new Set(['/', '/index.html', '/app.js', '/style.css', '/favicon.svg'])
export const CLIENT_DIR = fileURLToPath(new URL('../../clients/typescript/dist/', import.meta.url))
const OPENAPI_FETCH_DIR = dirname(fileURLToPath(import.meta.resolve('openapi-fetch')))

export interface PageServerOptions {
  host?: string
  /** Default: a free port. */
  port?: number
  /** Where the built client is (default clients/typescript/dist). */
  clientDir?: string
  /** Called with the path of each request that found no file (a 404): a file the page lacks. */
  onNotFound?: (path: string) => void
}

export interface PageServer {
  /** The page's origin, e.g. `http://127.0.0.1:8080`: what the gateway's CORS_ORIGINS must list. */
  origin: string
  close (): Promise<void>
}

export async function startPageServer (options: PageServerOptions = {}): Promise<PageServer> {
  const app = Fastify()
  const { onNotFound } = options
  if (onNotFound !== undefined) {
    app.addHook('onResponse', async (request, reply) => {
      if (reply.statusCode === 404) onNotFound(request.url)
    })
  }
  await app.register(fastifyStatic, { root: PAGE_DIR, allowedPath: (path) => PAGE_FILES.has(path) })
  for (const [prefix, root] of [['/client/', options.clientDir ?? CLIENT_DIR], ['/vendor/openapi-fetch/', OPENAPI_FETCH_DIR]] as const) {
    await app.register(fastifyStatic, { root, prefix, decorateReply: false })
  }
  const host = options.host ?? '127.0.0.1'
  await app.listen({ host, port: options.port ?? 0 })
  const { port } = app.server.address() as { port: number }
  return { origin: `http://${host}:${port}`, close: () => app.close() }
}
