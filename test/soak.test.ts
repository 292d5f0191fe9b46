import { test } from 'tap'
import { runMemoryRun } from './memory-runs.ts'

/**
 * A bounded soak: test/soak-run.ts sends a fixed number of requests, valid
 * and hostile mixed (lookups fresh, cached, no-cache and failing; writes with
 * and without Idempotency-Key; bad parameters, deep, large and non-JSON
 * bodies, bad keys, wrong scopes, unknown routes; event sockets past their
 * cap, unread or not answering pings; half-sent requests), to the gateway on
 * loopback, with the sandbox in another process, and samples its memory
 * after full collections. A longer soak: `node --expose-gc --import tsx test/soak-run.ts 200000`.
 */
const REQUESTS = 20_000
const MiB = 1024 * 1024

interface Sample { heap: number, rss: number }
interface Result {
  seconds: number
  start: Sample
  end: Sample
  samples: Array<Sample & { requests: number }>
  cache: { entries: number, bytes: number }
  cacheMaxBytes: number
  idempotencyMaxEntries: number
  statuses: Record<string, number>
  unexpected: string[]
  errorLines: string[]
  sockets: { opened: number, refused: number }
  eventSocketsLeft: number
}

test(`soak: ${REQUESTS} requests, valid and hostile: memory ends where it started plus the caches, no error, no undocumented 5xx`, async (t) => {
  const { code, result } = await runMemoryRun<Result>('test/soak-run.ts', [REQUESTS])
  t.equal(code, 0, 'the run finished')
  const mb = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`
  t.comment(`${REQUESTS} requests in ${result.seconds} s: ${JSON.stringify(result.statuses)}`)
  t.comment(`heap ${result.samples.map(s => mb(s.heap)).join(' → ')}; rss ${result.samples.map(s => mb(s.rss)).join(' → ')}`)

  // The caches the gateway may fill: the lookup cache's budget, and the idempotency store's entries (small JSON answers, 2 KiB each at most).
  const caches = result.cacheMaxBytes + result.idempotencyMaxEntries * 2048
  const grown = result.end.heap - result.start.heap
  t.ok(grown <= caches + 2 * MiB, `heap and ArrayBuffers grew ${mb(grown)}: within the caches (${mb(caches)}) + 2 MiB`)
  t.ok(result.cache.bytes <= result.cacheMaxBytes, `the cache holds ${mb(result.cache.bytes)} in ${result.cache.entries} entries`)
  // RSS does not shrink after a GC, but it stops growing: the second half adds little.
  const half = result.samples[Math.floor(result.samples.length / 2)]!
  t.ok(result.end.rss - half.rss <= 32 * MiB, `rss grew ${mb(result.end.rss - half.rss)} in the second half (${mb(half.rss)} → ${mb(result.end.rss)})`)

  t.same(result.errorLines, [], 'no error log line')
  t.same(result.unexpected, [], 'every error in the envelope, and no 5xx but the documented ones (UPSTREAM_*, OVERLOADED)')
  t.notOk(Object.keys(result.statuses).some(status => status.startsWith('500')), 'no 500')
  t.ok(result.statuses['200']! > REQUESTS / 3, 'valid requests were served')
  t.ok(result.sockets.opened > 0 && result.sockets.refused > 0, `event sockets opened (${result.sockets.opened}) and refused past the cap (${result.sockets.refused})`)
  t.equal(result.eventSocketsLeft, 0, 'every event socket is gone once its client is')
})
