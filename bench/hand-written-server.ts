// The hand-written peer: the server a logistics company's team would write in
// an afternoon instead of running the gateway, written as plainly as such a
// team would. Fastify validates the query with its schema, `undici.request`
// asks the hub, the answer is parsed, a recursive walk renames snake_case keys
// to camelCase, turns 0/1 flags into booleans and the hub's date-times into
// ISO 8601 in the hub's zone (+07:00), and Fastify's JSON.stringify sends
// `{ data, meta }` back. No client keys, rate limit, metrics, cache or
// breaker: what the gateway adds beyond this is what the bench compares.
import Fastify from 'fastify'
import { Agent, request } from 'undici'
import { RAW_READY_PATH, upstreamPathOf, type RawProxyConfig } from './shared.ts'

const raw = process.argv[2]
if (raw === undefined) {
  console.error('usage: hand-written-server.ts <config json>')
  process.exit(2)
}
const config = JSON.parse(raw) as RawProxyConfig

// As many hub connections as every other server of the bench keeps.
const hub = new Agent({ connections: config.connections, keepAliveTimeout: 10_000 })
const hubHeaders = {
  accept: 'application/json',
  [config.apiKeyHeader]: config.apiKey,
  authorization: config.accessToken
}

/** The hub's flags are 0 or 1 in members named like these. */
const FLAG_PREFIXES = ['is_', 'finish_', 'access_']
/** `2024-06-19 13:14:29` or `2024-02-17 12:37:00.0`, in Western Indonesia Time. */
const HUB_DATE_TIME = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(\.\d+)?)$/
const HUB_OFFSET = '+07:00'

function camelCase (key: string): string {
  return key.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase())
}

function convert (value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map(item => convert(item))
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[camelCase(k)] = convert(v, k)
    return out
  }
  if ((value === 0 || value === 1) && FLAG_PREFIXES.some(prefix => key.startsWith(prefix))) {
    return value === 1
  }
  if (typeof value === 'string') {
    const match = HUB_DATE_TIME.exec(value)
    if (match !== null) return `${match[1]}T${match[2]}${HUB_OFFSET}`
  }
  return value
}

class HubError extends Error {
  statusCode = 502
}

async function askHub (path: string): Promise<unknown> {
  const { statusCode, body } = await request(`${config.upstreamUrl}${path}`, {
    headers: hubHeaders,
    dispatcher: hub
  })
  if (statusCode !== 200) {
    await body.dump()
    throw new HubError(`the hub answered ${statusCode}`)
  }
  return await body.json()
}

function answer (list: unknown): { data: unknown[], meta: { count: number } } {
  const data = Array.isArray(list) ? list.map(item => convert(item)) : []
  return { data, meta: { count: data.length } }
}

interface Query { npwp: string, blNo?: string, blDate?: string }

const npwp = { type: 'string', pattern: '^[0-9]{15}$' }

const app = Fastify({ logger: false, keepAliveTimeout: 72_000 })

app.get(RAW_READY_PATH, async () => ({ ready: true }))

app.get<{ Querystring: Query }>('/raw/bl', {
  schema: {
    querystring: { type: 'object', required: ['npwp'], properties: { npwp } }
  }
}, async (req) => {
  const hubAnswer = await askHub(upstreamPathOf('bl', { ...req.query }) as string)
  return answer((hubAnswer as Record<string, unknown>)['Data BL BC 2.0'])
})

app.get<{ Querystring: Query }>('/raw/sp2', {
  schema: {
    querystring: {
      type: 'object',
      required: ['npwp', 'blNo', 'blDate'],
      properties: {
        npwp,
        blNo: { type: 'string', minLength: 1, maxLength: 40 },
        blDate: { type: 'string', format: 'date' }
      }
    }
  }
}, async (req) => {
  return answer(await askHub(upstreamPathOf('sp2', { ...req.query }) as string))
})

await app.listen({ port: config.port, host: config.host })

const stop = (): void => {
  app.close().then(async () => { await hub.close() })
    .then(() => process.exit(0), () => process.exit(1))
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
