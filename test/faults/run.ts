import { execFileSync } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { hashClientKey } from '../../src/auth/keys.ts'
import { sandboxEnv, startSandbox } from '../../src/sandbox/index.ts'
import { createRng } from '../../src/sandbox/prng.ts'
import {
  checkVerdicts, checkWrite, hubCallsByKey, timeline, type HubCall, type Verdicts, type Violation
} from './checker.ts'
import { startCluster, type Cluster } from './cluster.ts'
import type { LimitProbe } from './limits.ts'
import {
  healthy,
  planFaults,
  runFault,
  type FaultKind,
  type FaultRecord,
  type NemesisContext
} from './nemesis.ts'
import { sleep } from './processes.ts'
import { startReaders, type ReaderReport } from './readers.ts'
import { attemptOnce, startWriters, type Target, type Write } from './workload.ts'

export type Profile = 'ci' | 'full'

interface ProfileSettings {
  /** Writer loops at once. */
  writers: number
  faults: Partial<Record<FaultKind, number>>
  /** Writes made at least (the run goes on after its faults until there are). */
  minWrites: number
  /** Quiet time between two faults, ms. */
  gapMs: [number, number]
}

export const PROFILES: Record<Profile, ProfileSettings> = {
  // The CI form: every kind of fault but the slow one (failover-crash waits for the Sentinel's
  // down-after), once or more.
  ci: {
    writers: 8,
    faults: {
      'replica-kill': 4,
      'replica-term': 1,
      'redis-kill': 1,
      'redis-freeze': 1,
      'redis-full': 1,
      failover: 1,
      'hub-slow': 1
    },
    minWrites: 300,
    gapMs: [200, 600]
  },
  full: {
    writers: 12,
    faults: {
      'replica-kill': 22,
      'replica-term': 5,
      'redis-kill': 6,
      'redis-freeze': 3,
      'redis-full': 2,
      failover: 2,
      'failover-crash': 2,
      'hub-slow': 3
    },
    minWrites: 2000,
    gapMs: [500, 2000]
  }
}

/**
 * The settings every replica runs with besides the hub's and Redis's: what the timings below
 * assume.
 */
export const GATEWAY_SETTINGS = {
  UPSTREAM_DEADLINE_MS: 3000,
  REDIS_COMMAND_TIMEOUT_MS: 500,
  SHUTDOWN_GRACE_MS: 5000,
  LOG_LEVEL: 'warn'
} as const

/** The hub profile of every replica: the documented hub, its headers timeout the deadline's. */
export const HUB_PROFILE = { name: 'faults', defaults: { timeouts: { headersMs: 3000 } } } as const

/** The hub's pace: writes are at the hub for about this long, so that a fault lands on some. */
const HUB_LATENCY_MS = 150
const HUB_JITTER_MS = 50
const MAX_ATTEMPTS = 6
/**
 * Above a claim's lease (the deadline plus 5 s), which a retry may wait for before it hears the
 * outcome.
 */
const ATTEMPT_TIMEOUT_MS = 15_000
const PROBE_LIMIT = 10

export interface RunOptions {
  profile: Profile
  seed: string
  /**
   * Where the processes' logs and data go (default: a new directory under the system's temporary
   * one).
   */
  dir?: string
  log?: (line: string) => void
}

export interface RunResult {
  profile: Profile
  seed: string
  dir: string
  startedAt: string
  durationMs: number
  machine: {
    cores: number
    loadBefore: number[]
    loadAfter: number[]
    node: string
    redis: string
    haproxy: string
  }
  settings: Record<string, string | number>
  writes: Write[]
  faults: FaultRecord[]
  probes: LimitProbe[]
  hubCalls: Map<string, HubCall[]>
  readers: ReaderReport[]
  /** Each key's verdicts (checker.ts), by key. */
  verdicts: Map<string, Verdicts>
  /** Each failover's events: each reader's, and reloads told, from its start to its recovery. */
  failoverEvents: Array<{ fault: FaultRecord; received: Record<string, number>; reloads: number }>
  violations: Violation[]
  /** The timelines of the keys with a violation. */
  timelines: string[]
}

function version (command: string, args: string[], pattern: RegExp): string {
  try {
    return pattern.exec(execFileSync(command, args, { encoding: 'utf8' }))?.[1] ?? 'unknown'
  } catch {
    return 'not installed'
  }
}

function profileFile (dir: string): string {
  const file = join(dir, 'hub-profile.json')
  writeFileSync(file, JSON.stringify(HUB_PROFILE))
  return file
}

function clientsFile (
  dir: string,
  clients: Array<{
    name: string
    key: string
    scopes: string[]
    rateLimit?: { max: number; timeWindow: string }
    events?: 'all'
  }>
): string {
  const file = join(dir, 'clients.json')
  writeFileSync(
    file,
    JSON.stringify(clients.map(({ key, ...rest }) => ({ ...rest, keySha256: hashClientKey(key) })))
  )
  return file
}

/**
 * One fault run: the processes started, writers and event readers under
 * way, the faults of the profile in a seeded order, then a last pass over
 * every key; the invariants checked from the hub's own log and what the
 * clients saw. Resolves with everything the report needs; never throws for
 * a violation (they are in the result), only when the run itself fails.
 */
export async function runFaults ({
  profile,
  seed,
  dir = join(tmpdir(), `gateway-faults-${seed}`),
  log = () => {}
}: RunOptions): Promise<RunResult> {
  const settings = PROFILES[profile]
  const rng = createRng(`faults:${seed}`)
  const startedAt = Date.now()
  const now = () => Date.now() - startedAt
  const loadBefore = loadavg()
  const violations: Violation[] = []
  const faults: FaultRecord[] = []

  const writerKey = `cgw_faults-writer-${seed}`
  const readerKey = `cgw_faults-reader-${seed}`
  const probes = Array.from({ length: 16 }, (_, i) => ({
    name: `probe-${i + 1}`,
    key: `cgw_faults-probe-${i + 1}-${seed}`
  }))
  const sandbox = await startSandbox({
    latencyMs: HUB_LATENCY_MS,
    jitterMs: HUB_JITTER_MS,
    recordLimit: 5_000_000
  })
  let cluster: Cluster | undefined
  try {
    // A replay starts from nothing: no data files of an earlier run with this seed.
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(dir, { recursive: true })
    const clients = clientsFile(dir, [
      {
        name: 'fault-writer',
        key: writerKey,
        scopes: ['bookings:write'],
        rateLimit: { max: 1_000_000, timeWindow: '1 minute' }
      },
      { name: 'fault-reader', key: readerKey, scopes: ['events:read'], events: 'all' },
      ...probes.map((probe) => ({
        name: probe.name,
        key: probe.key,
        scopes: ['customs:read'],
        rateLimit: { max: PROBE_LIMIT, timeWindow: '1 minute' }
      }))
    ])
    log(`seed ${seed}, profile ${profile}, logs in ${dir}`)
    cluster = await startCluster({
      dir,
      replicas: 3,
      gatewayEnv: {
        ...sandboxEnv(sandbox.url),
        ...Object.fromEntries(Object.entries(GATEWAY_SETTINGS).map(([k, v]) => [k, String(v)])),
        CLIENTS_FILE: clients,
        UPSTREAM_PROFILE_FILE: profileFile(dir)
      }
    })
    const up = cluster
    await healthy(up, 60_000)
    log(`started in ${now()} ms: 3 replicas, Redis master and replica, Sentinel, HAProxy`)

    const replicas: Target[] = up.gateways.map((gateway) => ({
      name: gateway.name,
      url: gateway.url,
      incarnation: () => gateway.process.incarnation
    }))
    const proxy: Target = {
      name: 'haproxy',
      url: up.haproxy.url,
      incarnation: () => up.haproxy.process.incarnation
    }
    const targets = [proxy, ...replicas]
    const readers = startReaders(targets, readerKey, now)
    const writerOptions = {
      clientKey: writerKey,
      targets,
      maxAttempts: MAX_ATTEMPTS,
      attemptTimeoutMs: ATTEMPT_TIMEOUT_MS,
      viaProxy: 0.5,
      rng,
      now
    }
    const writers = startWriters(settings.writers, `w${seed}`, writerOptions)
    const context: NemesisContext = {
      cluster: up,
      sandbox,
      writers,
      replicas,
      rng,
      now,
      hubLatencyMs: HUB_LATENCY_MS,
      deadlineMs: GATEWAY_SETTINGS.UPSTREAM_DEADLINE_MS,
      probes: [...probes],
      probeLimit: PROBE_LIMIT,
      writerKey,
      gapKeyPrefix: `gap${seed}`,
      log
    }

    await sleep(1000)
    for (const kind of planFaults(settings.faults, rng)) {
      await sleep(rng.int(...settings.gapMs))
      try {
        faults.push(await runFault(kind, context))
      } catch (error) {
        violations.push({
          rule: 'every part recovers by itself after a fault',
          detail: `${kind}: ${(error as Error).message}`
        })
        log(`${kind}: did not recover: ${(error as Error).message}`)
        break
      }
    }
    while (writers.writes.length < settings.minWrites && now() < 30 * 60_000) await sleep(200)
    await writers.stop()
    log(`faults done at ${now()} ms; ${writers.writes.length} writes`)

    // The last pass: every key asked once more, once all is well: a stored answer is replayed (it
    // survived the faults), an unknown outcome stays unknown, a write nobody heard of is sent once.
    await healthy(up, 60_000)
    const queue = [...writers.writes]
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
          await attemptOnce(next, proxy, writerOptions, { final: true })
        }
      })
    )
    // The booked events the writes caused: a booked write answered 2xx (a replay too)
    // published one before its answer was kept.
    const booked = writers.writes.filter((write) => write.kind === 'booked')
    const answered = booked.filter((write) =>
      write.attempts.some((attempt) => attempt.status === 200)
    )
    const expected = new Set(answered.map((write) => write.key))
    // Until every reader has them all (or was told to reload), bounded: a busy machine
    // delivers late, not never.
    await readers.stop(expected, 30_000)

    const hubCalls = hubCallsByKey(sandbox.requests, startedAt)
    const timelines: string[] = []
    const verdicts = new Map<string, Verdicts>()
    for (const write of writers.writes) {
      const calls = hubCalls.get(write.key) ?? []
      const judged = checkVerdicts(write, calls)
      verdicts.set(write.key, judged.verdicts)
      const found = [...checkWrite(write, calls), ...judged.violations]
      if (found.length === 0) continue
      violations.push(...found)
      timelines.push(timeline(write, calls, faults))
    }
    for (const fault of faults) {
      const probe = fault.probe
      if (probe !== undefined && probe.allowed > probe.bound) {
        violations.push({
          rule: "a client's rate limit during a Redis outage stays within the documented bound",
          detail: `${probe.client}: ${probe.allowed} allowed, bound ${probe.bound} (limit ` +
            `${probe.limit}, ${probe.processes.size} replica processes)`
        })
      }
    }
    const events = readers.check(expected)
    violations.push(...events.violations)
    // A failover to a replica in sync is invisible to a resuming reader: no reload around it.
    const failovers = faults.filter((fault) => fault.kind.startsWith('failover'))
    const failoverEvents = failovers.map((fault) => {
      const until = fault.end + (fault.recoveredMs ?? 0)
      const within = (at: number) => at >= fault.start && at <= until
      const received = Object.fromEntries(
        events.reports.map((reader) => [reader.name, reader.eventsAt.filter(within).length])
      )
      const reloads = events.reports.flatMap((each) => each.reloadsAt.filter(within)).length
      if (fault.kind === 'failover' && reloads > 0) {
        const rule = 'a failover to a replica in sync is invisible to resuming readers'
        violations.push({ rule, detail: `${reloads} reloads told during ${fault.target}` })
      }
      return { fault, received, reloads }
    })

    // Everything the checks read, for a look after the run.
    writeFileSync(
      join(dir, 'result.json'),
      JSON.stringify({ writes: writers.writes, faults, hubCalls: Object.fromEntries(hubCalls) })
    )
    return {
      profile,
      seed,
      dir,
      startedAt: new Date(startedAt).toISOString(),
      durationMs: now(),
      machine: {
        cores: availableParallelism(),
        loadBefore,
        loadAfter: loadavg(),
        node: process.version,
        redis: version('redis-server', ['--version'], /v=(\S+)/),
        haproxy: version('haproxy', ['-v'], /version (\S+)/)
      },
      settings: {
        replicas: 3,
        writers: settings.writers,
        'attempts per key at most': MAX_ATTEMPTS,
        'client timeout per attempt (ms)': ATTEMPT_TIMEOUT_MS,
        'hub latency (ms)': `${HUB_LATENCY_MS} ± ${HUB_JITTER_MS}`,
        ...GATEWAY_SETTINGS,
        "hub headers timeout (ms, the hub profile's)": HUB_PROFILE.defaults.timeouts.headersMs,
        'rate limit of a probe client': `${PROBE_LIMIT} a minute`
      },
      writes: writers.writes,
      faults,
      probes: faults.flatMap((fault) => (fault.probe === undefined ? [] : [fault.probe])),
      hubCalls,
      readers: events.reports,
      verdicts,
      failoverEvents,
      violations,
      timelines
    }
  } finally {
    await cluster?.close()
    await sandbox.close()
  }
}
