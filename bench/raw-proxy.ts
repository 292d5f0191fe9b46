// The baseline: what a user would write instead of the gateway. Fastify and
// @fastify/reply-from map gateway-style requests to the hub's addresses, add
// the two credential headers and pass the body through unchanged.
import Fastify from 'fastify'
import replyFrom from '@fastify/reply-from'
import type { IncomingHttpHeaders } from 'node:http'
import { RAW_READY_PATH, upstreamPathOf, type RawProxyConfig } from './shared.ts'

const raw = process.argv[2]
if (raw === undefined) {
  console.error('usage: raw-proxy.ts <config json>')
  process.exit(2)
}
const config = JSON.parse(raw) as RawProxyConfig

const app = Fastify({ logger: false, keepAliveTimeout: 72_000 })
await app.register(replyFrom, {
  base: config.upstreamUrl,
  // The same pool the gateway uses: undici, keep-alive, the same size.
  undici: {
    connections: config.connections,
    pipelining: 1,
    keepAliveTimeout: 10_000,
    connect: { timeout: 3000 },
    headersTimeout: 10_000,
    bodyTimeout: 10_000
  }
})

function withCredentials (_request: unknown, headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return { ...headers, [config.apiKeyHeader]: config.apiKey, authorization: config.accessToken }
}

type Query = Record<string, string | undefined>

app.get(RAW_READY_PATH, async () => ({ ready: true }))

for (const route of ['bl', 'sp2'] as const) {
  app.get(`/raw/${route}`, (request, reply) => {
    const path = upstreamPathOf(route, request.query as Query)
    if (path === undefined) {
      return reply
        .code(400)
        .send({
          message: route === 'bl' ? 'npwp is required' : 'npwp, blNo and blDate are required'
        })
    }
    return reply.from(path, { rewriteRequestHeaders: withCredentials })
  })
}

await app.listen({ port: config.port, host: config.host })

const stop = (): void => {
  app.close().then(() => process.exit(0), () => process.exit(1))
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
