import { test } from 'tap'
import { runMemoryRun } from '../helpers/memory-runs.ts'

/**
 * A bounded soak: test/helpers/soak-run.ts sends a fixed number of requests, valid and hostile
 * mixed (lookups fresh, cached, no-cache and failing; writes with and without Idempotency-Key; bad
 * parameters, deep, large and non-JSON bodies, bad keys, wrong scopes, unknown routes; event
 * sockets past their cap, unread or not answering pings; half-sent requests), to the gateway on
 * loopback, with the sandbox in another process, and samples its memory after full collections. A
 * longer soak: `node --expose-gc --import tsx test/helpers/soak-run.ts 200000`.
 */
const REQUESTS = 20_000
const MiB = 1024 * 1024
const RSS_ALLOWANCE = 160 * MiB

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

test(`soak: ${REQUESTS} requests, valid and hostile: memory ends where it started plus the ` +
  'caches, no error, no undocumented 5xx', async (t) => {
  const { code, result } = await runMemoryRun<Result>('test/helpers/soak-run.ts', [REQUESTS])
  t.equal(code, 0, 'the run finished')
  const mb = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`
  t.comment(`${REQUESTS} requests in ${result.seconds} s: ${JSON.stringify(result.statuses)}`)
  t.comment(
    `heap ${result.samples.map((s) => mb(s.heap)).join(' → ')}; rss ` +
    `${result.samples.map((s) => mb(s.rss)).join(' → ')}`
  )

  // The caches the gateway may fill: the lookup cache's budget, and the idempotency store's entries
  // (small JSON answers, 2 KiB each at most).
  const caches = result.cacheMaxBytes + result.idempotencyMaxEntries * 2048
  const grown = result.end.heap - result.start.heap
  t.ok(
    grown <= caches + 2 * MiB,
    `heap and ArrayBuffers grew ${mb(grown)}: within the caches (${mb(caches)}) + 2 MiB`
  )
  t.ok(
    result.cache.bytes <= result.cacheMaxBytes,
    `the cache holds ${mb(result.cache.bytes)} in ${result.cache.entries} entries`
  )
  // RSS is not the heap: memory the allocator got back from freed native
  // buffers is kept, not returned, so RSS climbs for the first 40,000 or so
  // requests and then stays flat (measured over 100,000: +170 MiB by 20,000,
  // +193 MiB at 40,000 and at 100,000). The steps of one 20,000 run are not
  // monotonic (+18, +8, +9, +19, +21 MiB on CI), so what is bounded is the
  // whole run's growth: 64 to 99 MiB measured, 160 allowed. A native leak
  // of more than 8 KB a request (a read buffer kept per request would be 64)
  // fails it; the heap check above is the exact one.
  const rssGrown = result.end.rss - result.start.rss
  t.ok(
    rssGrown <= RSS_ALLOWANCE,
    `rss grew ${mb(rssGrown)} (${mb(result.start.rss)} → ${mb(result.end.rss)}), within ` +
    `${mb(RSS_ALLOWANCE)}`
  )

  t.same(result.errorLines, [], 'no error log line')
  t.same(
    result.unexpected,
    [],
    'every error in the envelope, and no 5xx but the documented ones (UPSTREAM_*, OVERLOADED)'
  )
  t.notOk(
    Object.keys(result.statuses).some((status) => status.startsWith('500')),
    'no 500'
  )
  t.ok(result.statuses['200']! > REQUESTS / 3, 'valid requests were served')
  t.ok(
    result.sockets.opened > 0 && result.sockets.refused > 0,
    `event sockets opened (${result.sockets.opened}) and refused past the cap ` +
    `(${result.sockets.refused})`
  )
  t.equal(result.eventSocketsLeft, 0, 'every event socket is gone once its client is')
})
