import type { Sandbox } from '../../src/sandbox/index.ts'
import type { Rng } from '../../src/sandbox/prng.ts'
import { SENTINEL_DOWN_AFTER_MS, type Cluster, type Gateway } from './cluster.ts'
import { newProbe, probePhase, type LimitProbe } from './limits.ts'
import {
  flushCounts, flushesBetween, settled, startGapProbe, type GapProbe, type WriteGap
} from './probes.ts'
import { sleep, waitFor } from './processes.ts'
import type { Target, Writers } from './workload.ts'

export const FAULT_KINDS = [
  'replica-kill',
  'replica-term',
  'redis-kill',
  'redis-freeze',
  'redis-full',
  'failover',
  'failover-crash',
  'hub-slow'
] as const
export type FaultKind = typeof FAULT_KINDS[number]

export const FAULT_NAMES: Record<FaultKind, string> = {
  'replica-kill': 'a replica killed (SIGKILL) with writes in flight, then started again',
  'replica-term': 'a replica stopped gracefully (SIGTERM), then started again',
  'redis-kill':
    'the Redis master killed (SIGKILL) and started again from its append-only file, with a ' +
    'rate-limit probe',
  'redis-freeze':
    'the Redis master frozen (SIGSTOP) for longer than the command timeout, then resumed',
  'redis-full':
    'the Redis master filling up (maxmemory just above its use, noeviction), then given room again',
  failover:
    'a Sentinel failover to a replica (SENTINEL FAILOVER: the old master demoted while it runs)',
  'failover-crash':
    'the Redis master killed and left down until the Sentinel promotes a replica, then started ' +
    'again as a replica',
  'hub-slow': 'the hub slower than the request deadline, then back to its pace'
}

export interface FaultRecord {
  kind: FaultKind
  /** What it hit: a replica's name, a Redis node's, the hub. */
  target: string
  /** ms since the run started. */
  start: number
  end: number
  detail: string
  /**
   * Writes the client had in flight to the replica when it was killed (direct attempts; more came
   * through HAProxy).
   */
  inFlight?: number
  /** From the fault's end until every replica was ready with Redis up again. */
  recoveredMs?: number
  probe?: LimitProbe
  /** A failover's: how long each replica refused writes (a probe writing to each all along). */
  writeGap?: WriteGap
  /**
   * A Redis fault's: each replica's flushes of outcomes that waited for Redis,
   * and their mean window (from Redis answering again to the last stored).
   */
  flushes?: Array<{ replica: string, count: number, meanMs: number }>
}

/** The faults that take Redis away (or its writes): outcomes wait for it, then are flushed. */
const REDIS_FAULTS = new Set<FaultKind>(
  ['redis-kill', 'redis-freeze', 'redis-full', 'failover', 'failover-crash'])

export interface NemesisContext {
  cluster: Cluster
  sandbox: Sandbox
  writers: Writers
  /** The replicas as targets (their names, addresses and incarnations). */
  replicas: Target[]
  rng: Rng
  now: () => number
  /** The hub's pace outside a hub-slow fault, and the request deadline the gateways run with. */
  hubLatencyMs: number
  deadlineMs: number
  /** Rate-limit probe clients not used yet: name and key. */
  probes: Array<{ name: string, key: string }>
  probeLimit: number
  /** The writer client's key, and a prefix for the keys of write-gap probes. */
  writerKey: string
  gapKeyPrefix: string
  log: (line: string) => void
}

/** The faults of a run in a seeded order: each kind as often as asked. */
export function planFaults (counts: Partial<Record<FaultKind, number>>, rng: Rng): FaultKind[] {
  const plan: FaultKind[] = []
  for (const kind of FAULT_KINDS) for (let i = 0; i < (counts[kind] ?? 0); i++) plan.push(kind)
  for (let i = plan.length - 1; i > 0; i--) {
    const j = rng.int(0, i)
    const swap = plan[i]!
    plan[i] = plan[j]!
    plan[j] = swap
  }
  return plan
}

async function readiness (gateway: Gateway): Promise<string> {
  try {
    const res = await fetch(`${gateway.url}/health/ready`, { signal: AbortSignal.timeout(1000) })
    const body = await res.json() as { data?: { redis?: string } }
    return res.status === 200 ? body.data?.redis ?? 'no redis' : `status ${res.status}`
  } catch {
    return 'unreachable'
  }
}

/**
 * Every replica ready with Redis up, and the Redis master with a replica in
 * sync: the state each fault starts from. A replica that does not come back
 * to Redis is a finding, so this throws with what each one says.
 */
export async function healthy (cluster: Cluster, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const states = await Promise.all(cluster.gateways.map(readiness))
    // One replica in sync is enough to go on: after a failover, the old master rejoins as a replica
    // at the Sentinel's next look at it (up to 10 s).
    const synced = await cluster.inSync().catch(() => 0) >= 1
    if (synced && states.every(state => state === 'up')) return
    if (Date.now() > deadline) {
      throw new Error(
        `not healthy within ${timeoutMs} ms: ` +
        `${cluster.gateways.map((g, i) => `${g.name} ${states[i]}`).join(', ')}; replicas in ` +
        `sync: ${synced}`
      )
    }
    await sleep(100)
  }
}

async function allReport (
  cluster: Cluster,
  check: (state: string) => boolean,
  timeoutMs: number
): Promise<boolean> {
  try {
    await waitFor(
      async () => (await Promise.all(cluster.gateways.map(readiness))).every(check),
      timeoutMs,
      'replicas report',
      50
    )
    return true
  } catch {
    return false
  }
}

/**
 * Runs one fault to its end (the process started again, the hub back to its pace), and waits for
 * the cluster to recover.
 */
export async function runFault (kind: FaultKind, ctx: NemesisContext): Promise<FaultRecord> {
  const { cluster, now } = ctx
  const flushedBefore = REDIS_FAULTS.has(kind) ? await flushCounts(cluster.gateways) : []
  const start = now()
  const record: FaultRecord = { kind, target: '', start, end: start, detail: '' }
  let gap: GapProbe | undefined
  if (kind === 'failover' || kind === 'failover-crash') {
    const keyPrefix = `${ctx.gapKeyPrefix}-${start}`
    gap = startGapProbe(cluster.gateways, { clientKey: ctx.writerKey, keyPrefix, now })
  }
  try {
    await inflict(kind, ctx, record)
    record.end = now()
    await healthy(cluster, 60_000)
    record.recoveredMs = Math.round(now() - record.end)
  } finally {
    if (gap !== undefined) record.writeGap = await gap.stop()
  }
  if (REDIS_FAULTS.has(kind)) {
    await settled(cluster.gateways, 20_000)
    record.flushes = flushesBetween(flushedBefore, await flushCounts(cluster.gateways))
  }
  const flushes = record.flushes?.map(f => `${f.replica} ${Math.round(f.meanMs)} ms`).join(', ')
  const gapMs = record.writeGap?.longestMs
  const measured = [
    gapMs === undefined ? '' : `; writes refused for ${gapMs} ms at most`,
    flushes === undefined ? '' : `; flushes ${flushes}`
  ].join('')
  const recovered = `recovered in ${record.recoveredMs} ms`
  ctx.log(`${kind} ${record.target}: ${record.detail}; ${recovered}${measured}`)
  return record
}

/** The fault itself, to its end (the process started again, the hub back to its pace). */
async function inflict (kind: FaultKind, ctx: NemesisContext, record: FaultRecord): Promise<void> {
  const { cluster, rng, now } = ctx
  switch (kind) {
    case 'replica-kill':
    case 'replica-term': {
      // Mid-write: the replica with the most writes in flight right now (the client's direct ones).
      const ranked = cluster.gateways.map((gateway) => ({
        gateway,
        inFlight: ctx.writers.inFlight(gateway.name)
      }))
      const most = Math.max(...ranked.map(each => each.inFlight))
      const { gateway, inFlight } = rng.pick(ranked.filter(each => each.inFlight === most))
      record.target = gateway.name
      record.inFlight = inFlight
      const signal = kind === 'replica-kill' ? 'SIGKILL' : 'SIGTERM'
      await gateway.process.stop(signal)
      const down = rng.int(200, 1500)
      await sleep(down)
      await gateway.process.start()
      record.detail = `${signal} with ${inFlight} direct writes in flight; started again after ` +
        `${down} ms`
      break
    }
    case 'redis-kill': {
      const master = await cluster.master()
      record.target = master.name
      const client = ctx.probes.shift()
      const probe = client === undefined ? undefined : newProbe(client.name, ctx.probeLimit)
      const perReplica = Math.ceil(ctx.probeLimit * 1.5)
      if (probe !== undefined && client !== undefined) {
        await probePhase(
          probe,
          'before (Redis up)',
          client.key,
          ctx.replicas,
          Math.ceil(perReplica / 2)
        )
      }
      await master.process.stop('SIGKILL')
      const noticed = await allReport(cluster, state => state === 'down', 3000)
      if (probe !== undefined && client !== undefined) {
        await probePhase(probe, 'during the ' +
        'outage', client.key, ctx.replicas, perReplica)
      }
      const down = rng.int(300, 1500)
      await sleep(down)
      await master.process.start()
      await allReport(cluster, state => state === 'up', 20_000)
      if (probe !== undefined && client !== undefined) {
        await probePhase(
          probe,
          'after (Redis restarted)',
          client.key,
          ctx.replicas,
          Math.ceil(perReplica / 2)
        )
      }
      if (probe !== undefined) record.probe = probe
      record.detail =
        'SIGKILL, ' +
        `${noticed ? 'every replica reported it down' : 'not every replica reported it down'}, ` +
        `started again after ${down} ms more` +
        (probe === undefined
          ? ''
          : `; ${probe.client} (limit ${probe.limit}): ${probe.allowed} allowed of ` +
            `${probe.phases.reduce((sum, each) => sum + each.sent, 0)}, bound ${probe.bound}`)
      break
    }
    case 'redis-freeze': {
      const master = await cluster.master()
      record.target = master.name
      const frozen = rng.int(1200, 2500)
      master.process.signal('SIGSTOP')
      await sleep(frozen)
      master.process.signal('SIGCONT')
      record.detail = `SIGSTOP for ${frozen} ms (command timeout 500 ms; the Sentinel's ` +
        `down-after ${SENTINEL_DOWN_AFTER_MS} ms)`
      break
    }
    case 'redis-full': {
      const master = await cluster.master()
      record.target = master.name
      const used = Number(/used_memory:(\d+)/.exec(await master.cli('INFO', 'memory'))?.[1])
      const room = 64 * 1024
      await master.cli('CONFIG', 'SET', 'maxmemory', String(used + room))
      const refused = await allReport(cluster, state => state === 'refusing-writes', 15_000)
      const full = rng.int(1500, 3000)
      await sleep(full)
      await master.cli('CONFIG', 'SET', 'maxmemory', '0')
      record.detail =
        `maxmemory set to ${used} + ${room} bytes used; ` +
        `${refused ? 'every' : 'not every'} replica reported refusing-writes; ` +
        `room again ${full} ms later`
      break
    }
    case 'failover': {
      const before = await cluster.master()
      // Refused (INPROG, NOGOODSLAVE) while an earlier failover or a resync is not over: asked
      // again.
      await waitFor(
        async () => (await cluster.sentinel.cli('SENTINEL', 'FAILOVER', 'mymaster')) === 'OK',
        30_000,
        'the Sentinel takes the failover',
        500
      )
      await waitFor(
        async () => (await cluster.master()) !== before,
        20_000,
        'the Sentinel names the new master'
      )
      const after = await cluster.master()
      record.target = `${before.name} -> ${after.name}`
      record.detail = 'SENTINEL FAILOVER; the old master demoted while it runs'
      break
    }
    case 'failover-crash': {
      const before = await cluster.master()
      await before.process.stop('SIGKILL')
      const killedAt = now()
      await waitFor(
        async () => (await cluster.master()) !== before,
        SENTINEL_DOWN_AFTER_MS + 20_000,
        'the Sentinel promotes a replica'
      )
      const promoted = now() - killedAt
      await before.process.start()
      const after = await cluster.master()
      record.target = `${before.name} -> ${after.name}`
      record.detail = `SIGKILL; a replica promoted ${Math.round(promoted)} ms later; the old ` +
        'master started again as a replica'
      break
    }
    case 'hub-slow': {
      const slow = ctx.deadlineMs + 500
      const lasting = rng.int(1500, 3000)
      ctx.sandbox.latencyMs = slow
      record.target = 'hub'
      await sleep(lasting)
      ctx.sandbox.latencyMs = ctx.hubLatencyMs
      record.detail = `every hub answer ${slow} ms late (deadline ${ctx.deadlineMs} ms) for ` +
        `${lasting} ms`
      break
    }
  }
}
