// Stage `hub-call`: no HTTP exchange with the hub; the body the bench's
// upstream would send (BENCH_STAGE_BODIES: the files by path fragment) is
// read from memory, as one chunk, after the same 20 ms.
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Transport, TransportOptions } from '../../../src/upstream/transport.ts'

const bodies: Array<[string, Buffer]> = Object.entries(JSON.parse(process.env.BENCH_STAGE_BODIES ?? '{}') as Record<string, string>)
  .map(([fragment, file]) => [fragment, readFileSync(file)])
const latencyMs = Number(process.env.BENCH_STAGE_LATENCY_MS ?? '20')

export function createTransport ({ config }: TransportOptions): Transport {
  const basePaths = { hub: new URL(config.UPSTREAM_HUB_URL).pathname.replace(/\/+$/, ''), base: new URL(config.UPSTREAM_BASE_URL).pathname.replace(/\/+$/, '') }
  return {
    basePath: (service) => basePaths[service],
    async exchange (_op, { path }, read) {
      const body = bodies.find(([fragment]) => path.includes(fragment))?.[1]
      if (body === undefined) throw new Error(`no bench body for ${path}`)
      await sleep(latencyMs)
      return await read([body], body.length, 200)
    },
    async close () {}
  }
}
