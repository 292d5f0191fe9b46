import { test } from 'tap'
import { runMemoryRun } from '../helpers/memory-runs.ts'

/**
 * The cache's budget is its memory: 25,000 distinct lookups through the real
 * gateway on the sandbox (each an empty list, the cheapest answer, so the
 * most entries a budget holds: about 5,000 for 4 MiB, so the cache is
 * filled and evicted five times over), then a full GC: what stays in the
 * heap and in ArrayBuffers is within CACHE_MAX_BYTES plus a small fixed
 * overhead. In a process of its own, for --expose-gc and an exact baseline.
 * More by hand: `node --expose-gc --import tsx test/helpers/cache-memory-run.ts 200000`.
 */
const LOOKUPS = 25_000
const BUDGET = 4 * 1024 * 1024
/**
 * What the gateway may keep beyond its cache's budget after all that: the
 * Map's table, pools, the code and feedback V8 keeps for the route the
 * warm-up (another route) did not run. Measured over runs: 7.3 to 10.7 MiB
 * retained in all for an 8 MiB budget, so 4 MiB. What this guards against
 * is far above it: without eviction the 25,000 entries would hold about 20 MiB.
 */
const FIXED = 4 * 1024 * 1024

test(`${LOOKUPS} distinct lookups: the memory retained after a full GC stays within ` +
  'CACHE_MAX_BYTES plus a fixed overhead', async (t) => {
  const { code, result } = await runMemoryRun<{
    seconds: number
    retainedBytes: number
    entries: number
    bytes: number
    errors: number
  }>('test/helpers/cache-memory-run.ts', [LOOKUPS, BUDGET])
  t.equal(code, 0, 'the run finished')
  t.comment(
    `${LOOKUPS} lookups in ${result.seconds} s; ${result.entries} entries charged ` +
    `${result.bytes} bytes; ${result.retainedBytes} bytes retained`
  )
  t.ok(
    result.retainedBytes <= BUDGET + FIXED,
    `retained ${(result.retainedBytes / 2 ** 20).toFixed(1)} MiB, within the ${BUDGET / 2 ** 20} ` +
    `MiB budget + ${FIXED / 2 ** 20} MiB`
  )
  t.ok(result.bytes <= BUDGET, 'the charged bytes within the budget')
  t.ok(result.entries > 1000, `the cache was in use (${result.entries} entries)`)
  t.equal(result.errors, 0, 'no error logged')
})
