// `npx tsx bench/fixed-cost-micro.ts`: per-request changes to the fixed cost
// measured in one process, before and after, interleaved (A, B, A, B…) and
// timed by the process's CPU time, so that other work on the machine counts
// for neither. Each pair runs the same work through the code as it was and
// as it is; the report is the median over rounds and every round's figure.
import { Readable } from 'node:stream'
import Fastify from 'fastify'
import { Counter, Histogram, Registry } from 'prom-client'

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

async function cpuPer (n: number, work: () => Promise<void> | void): Promise<number> {
  const start = process.cpuUsage()
  for (let i = 0; i < n; i++) await work()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / n
}

async function compare (
  name: string,
  n: number,
  before: () => Promise<void> | void,
  after: () => Promise<void> | void,
  rounds = 11
): Promise<void> {
  await cpuPer(n, before)
  await cpuPer(n, after)
  const a: number[] = []
  const b: number[] = []
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      a.push(await cpuPer(n, before))
      b.push(await cpuPer(n, after))
    } else {
      b.push(await cpuPer(n, after))
      a.push(await cpuPer(n, before))
    }
  }
  const fmt = (xs: number[]): string => xs.map((x) => x.toFixed(2)).join(', ')
  process.stdout.write(
    `| ${name} | ${median(a).toFixed(2)} µs (${fmt(a)}) | ${median(b).toFixed(2)} µs (${fmt(b)}) ` +
    `| ${(median(a) - median(b)).toFixed(2)} µs |\n`
  )
}

/**
 * A Fastify app answering GET / with one onRequest and one onResponse hook of the given style,
 * through inject.
 */
async function appWith (style: 'async' | 'callback') {
  const app = Fastify()
  const registry = new Registry()
  const requests = new Counter({
    name: 'r',
    help: 'r',
    labelNames: ['method', 'route', 'status_code'],
    registers: [registry]
  })
  const seconds = new Histogram({
    name: 's',
    help: 's',
    labelNames: ['method', 'route'],
    registers: [registry]
  })
  const scopes = ['customs:read', 'sp2:read']
  if (style === 'async') {
    app.addHook('onRequest', async () => {
      if (!scopes.includes('sp2:read')) throw new Error('forbidden')
    })
    app.addHook('onResponse', async (request, reply) => {
      const route = request.routeOptions.url ?? 'unmatched'
      requests.inc({ method: request.method, route, status_code: reply.statusCode })
      seconds.observe({ method: request.method, route }, reply.elapsedTime / 1000)
    })
  } else {
    app.addHook('onRequest', (_request, _reply, done) => {
      if (!scopes.includes('sp2:read')) {
        done(new Error('forbidden'))
        return
      }
      done()
    })
    app.addHook('onResponse', (request, reply, done) => {
      const route = request.routeOptions.url ?? 'unmatched'
      requests.inc({ method: request.method, route, status_code: reply.statusCode })
      seconds.observe({ method: request.method, route }, reply.elapsedTime / 1000)
      done()
    })
  }
  app.get('/', (_request, reply) => { reply.send('ok') })
  await app.ready()
  return app
}

async function forAwait (body: Readable): Promise<Buffer[]> {
  const chunks: Buffer[] = []
  for await (const chunk of body) chunks.push(chunk as Buffer)
  return chunks
}

function withEvents (body: Readable): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    body.on('data', (chunk: Buffer) => { chunks.push(chunk) })
    body.once('error', reject)
    body.once('end', () => resolve(chunks))
  })
}

const BL = Buffer.alloc(325, 0x61)

process.stdout.write(
  '| change | before | after | saved per request |\n| --- | ---: | ---: | ---: |\n'
)
const asyncApp = await appWith('async')
const callbackApp = await appWith('callback')
await compare(
  'scope check and metrics hook: async → callback (Fastify inject, GET with both hooks)',
  5000,
  async () => {
    await asyncApp.inject('/')
  },
  async () => {
    await callbackApp.inject('/')
  }
)
await compare(
  'body read: for await → events (one 325-byte chunk)',
  20000,
  async () => {
    await forAwait(Readable.from([BL], { objectMode: false }))
  },
  async () => {
    await withEvents(Readable.from([BL], { objectMode: false }))
  }
)
