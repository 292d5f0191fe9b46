import pino from 'pino'
import { test } from 'tap'
import { resolveConfig } from '../../src/config/resolve.ts'
import { createCredentials } from '../../src/credentials/index.ts'
import { resolveProfile } from '../../src/profile/resolve.ts'
import {
  SANDBOX_FIXTURES as F,
  sandboxEnv,
  startSandbox,
  type Sandbox
} from '../../src/sandbox/index.ts'
import { createMemoryLookupStore } from '../../src/state/memory/lookup-cache.ts'
import { createMemoryTokenStore } from '../../src/state/memory/token-store.ts'
import type { SharedLookupEntry, SharedLookupTier } from '../../src/state/types.ts'
import { createHubClient, type HubCaller, type HubClient } from '../../src/upstream/client.ts'
import type { Clock } from '../../src/clock.ts'
import { manualClock, RESILIENCE_OFF, testProfile } from '../helpers/helper.ts'

/**
 * A SharedLookupTier held in one process's memory: what the Redis tier
 * (state/redis/lookup-tier.ts) is to replicas, this is to two hub clients
 * of one test. Entries are copied in and out, as they would cross the wire.
 */
function memoryTier (clock: Clock): SharedLookupTier & { entries: Map<string, SharedLookupEntry> } {
  const entries = new Map<string, SharedLookupEntry>()
  return {
    entries,
    async get (key) {
      const entry = entries.get(key)
      if (entry === undefined || clock() >= entry.staleUntil) return undefined
      return { ...entry, json: Buffer.from(entry.json) }
    },
    async set (key, entry) {
      entries.set(key, { ...entry, json: Buffer.from(entry.json) })
    }
  }
}

const log = pino({ level: 'silent' })
const caller = (id: string): HubCaller => ({ id, log, headers: {} })
const lookup = { operation: 'noblbc20', params: { npwp: F.taxpayer.npwp } } as const

/** Two hub clients (two replicas) in front of one sandbox, sharing `tier`. */
async function replicas (
  t: { teardown(fn: () => unknown): void },
  tier: SharedLookupTier | undefined,
  clock: Clock
): Promise<{ sandbox: Sandbox; a: HubClient; b: HubClient }> {
  const sandbox = await startSandbox({})
  const config = resolveConfig({
    ...sandboxEnv(sandbox.url),
    ...RESILIENCE_OFF,
    CACHE_TTL_SECONDS: '60',
    LOG_LEVEL: 'silent'
  })
  // No retries, no breaker: one hub call per lookup.
  const profile = resolveProfile(config, { builtIn: testProfile() })
  const client = (): HubClient =>
    createHubClient({
      config,
      profile,
      credentials: createCredentials(config, profile, {
        log,
        tokens: createMemoryTokenStore({ clock }),
        clock
      }),
      userAgent: 'customs-gateway/test',
      lookupStore: (budget) => createMemoryLookupStore({ ...budget, clock }),
      ...(tier === undefined ? {} : { lookupTier: tier }),
      clock
    })
  const [a, b] = [client(), client()]
  t.teardown(async () => {
    await Promise.all([a.close(), b.close()])
    await sandbox.close()
  })
  return { sandbox, a, b }
}

function metaOf (result: Awaited<ReturnType<HubClient['call']>>): unknown {
  const cache = result.cache!
  return (
    JSON.parse(result.envelope({ cached: cache.cached, stale: cache.stale }).toString('utf8')) as {
      meta: unknown
    }
  ).meta
}

test('a replica answers from the tier the replicas share: meta.cached, the same age, one hub ' +
  'call', async (t) => {
  const clock = manualClock()
  const tier = memoryTier(clock.now)
  const { sandbox, a, b } = await replicas(t, tier, clock.now)

  const first = await a.call(caller('r1'), lookup)
  t.equal(first.cache?.cached, false, 'the first replica asked the hub')
  t.equal(sandbox.count('noblbc20'), 1)
  t.equal(tier.entries.size, 1, 'and shared its answer')

  clock.advance(7_000)
  const second = await b.call(caller('r2'), lookup)
  t.equal(sandbox.count('noblbc20'), 1, 'the second replica did not')
  t.same(second.cache, { cached: true, stale: false, ageSeconds: 7, ttlSeconds: 60 })
  t.strictSame(metaOf(second), { count: F.taxpayer.bc20.length, cached: true })
  t.same(second.data, first.data)
  t.equal(second.etag, first.etag, 'the same entity tag on both replicas')
  t.equal(second.upstreamStatus, first.upstreamStatus)
  t.equal(
    (await a.call(caller('r3'), lookup)).cache?.ageSeconds,
    7,
    'the same age on both replicas'
  )

  // The shared entry now sits in the second replica's memory: no second read of the tier.
  tier.entries.clear()
  clock.advance(1_000)
  t.same((await b.call(caller('r4'), lookup)).cache, {
    cached: true,
    stale: false,
    ageSeconds: 8,
    ttlSeconds: 60
  })
  t.equal(sandbox.count('noblbc20'), 1)
})

test('past its TTL, or asked afresh, a shared entry is not used: the hub is asked', async (t) => {
  const clock = manualClock()
  const tier = memoryTier(clock.now)
  const { sandbox, a, b } = await replicas(t, tier, clock.now)
  await a.call(caller('r1'), lookup)

  t.equal(
    (await b.call(caller('r2'), { ...lookup, fresh: true })).cache?.cached,
    false,
    'no-cache asks the hub'
  )
  t.equal(sandbox.count('noblbc20'), 2)

  clock.advance(61_000)
  const late = await a.call(caller('r3'), lookup)
  t.equal(late.cache?.cached, false, 'an expired entry is not an answer')
  t.equal(sandbox.count('noblbc20'), 3)
})

test('without a shared tier each replica asks the hub itself', async (t) => {
  const clock = manualClock()
  const { sandbox, a, b } = await replicas(t, undefined, clock.now)
  await a.call(caller('r1'), lookup)
  t.equal((await b.call(caller('r2'), lookup)).cache?.cached, false)
  t.equal(sandbox.count('noblbc20'), 2)
})

test('a shared tier that fails is a miss: the lookup is answered from the hub', async (t) => {
  const clock = manualClock()
  const broken: SharedLookupTier = {
    get: async () => { throw new Error('tier down') },
    set: async () => { throw new Error('tier down') }
  }
  const { sandbox, a } = await replicas(t, broken, clock.now)
  t.equal((await a.call(caller('r1'), lookup)).cache?.cached, false)
  t.equal((await a.call(caller('r2'), lookup)).cache?.cached, true, 'from this replica\'s memory')
  t.equal(sandbox.count('noblbc20'), 1)
})
