// The reference servers: minimal servers that show what the machine allows a
// Node server that reads the hub's answer, the floor under any gateway that
// transforms it. Fastify and an undici pool like the gateway's, the raw
// proxy's routes and credentials; no validation, client keys, metrics or
// error envelope. `buffer` reads the body whole and sends it back;
// `parse` also runs JSON.parse over it and JSON.stringify of
// `{ data, meta: { count } }`, renaming nothing and rewriting no value;
// `cache` keeps `parse`'s answer by URL and sends those bytes again, the
// floor under a cached lookup.
import Fastify from 'fastify'
import { Pool } from 'undici'
import { RAW_READY_PATH, upstreamPathOf, type ReferenceServerConfig } from './shared.ts'

const raw = process.argv[2]
if (raw === undefined) {
  console.error('usage: reference-server.ts <config json>')
  process.exit(2)
}
const config = JSON.parse(raw) as ReferenceServerConfig

const pool = new Pool(config.upstreamUrl, {
  connections: config.connections,
  keepAliveTimeout: 10_000,
  connect: { timeout: 3000 },
  headersTimeout: 10_000,
  bodyTimeout: 10_000
})
const headers = {
  accept: 'application/json',
  [config.apiKeyHeader]: config.apiKey,
  authorization: config.accessToken
}

const app = Fastify({ logger: false, keepAliveTimeout: 72_000 })
/** `cache` mode: answers by URL. The bench repeats one URL per case, so this stays small. */
const kept = new Map<string, Buffer>()

/**
 * `{ data, meta: { count } }` of the hub's answer: its list (top level, or the one key's value),
 * re-serialized.
 */
function reserialized (bytes: Buffer): Buffer {
  const parsed = JSON.parse(bytes.toString('utf8')) as unknown
  const data = Array.isArray(parsed) ? parsed : Object.values(parsed as Record<string, unknown>)[0]
  return Buffer.from(
    JSON.stringify({ data, meta: { count: Array.isArray(data) ? data.length : undefined } })
  )
}

app.get(RAW_READY_PATH, async () => ({ ready: true }))

for (const route of ['bl', 'sp2'] as const) {
  app.get(`/raw/${route}`, async (request, reply) => {
    const path = upstreamPathOf(route, request.query as Record<string, string | undefined>)
    if (path === undefined) return await reply.code(400).send({ message: 'missing parameters' })
    reply.header('content-type', 'application/json; charset=utf-8')
    const known = config.mode === 'cache' ? kept.get(request.url) : undefined
    if (known !== undefined) return known
    const { statusCode, body } = await pool.request({ method: 'GET', path, headers })
    const chunks: Buffer[] = []
    for await (const chunk of body) chunks.push(chunk as Buffer)
    const bytes = Buffer.concat(chunks)
    reply.code(statusCode)
    if (config.mode === 'buffer') return bytes
    const answer = reserialized(bytes)
    if (config.mode === 'cache' && statusCode === 200) kept.set(request.url, answer)
    return answer
  })
}

await app.listen({ port: config.port, host: config.host })

const stop = (): void => {
  app
    .close()
    .then(async () => {
      await pool.close()
    })
    .then(
      () => process.exit(0),
      () => process.exit(1)
    )
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
