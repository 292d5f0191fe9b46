import type { Gateway } from './cluster.ts'
import { sleep, waitFor } from './processes.ts'
import { requestOf } from './workload.ts'

/** How long a replica refused writes across a fault: the first refused to the next accepted. */
export interface WriteGap {
  /** The longest of any replica, ms (0: none refused a write). */
  longestMs: number
  byReplica: Record<string, number>
}

export interface GapProbe { stop (): Promise<WriteGap> }

/**
 * Writes with fresh keys to every replica, one after the other on each (a
 * pause of `pauseMs` between them), until stopped: each replica's gap is
 * from its first refused write (any answer but a 2xx, or none) to the first
 * it accepted after its last refusal. Offers: they publish no event.
 */
export function startGapProbe (replicas: readonly Gateway[], options: {
  clientKey: string
  keyPrefix: string
  now: () => number
  pauseMs?: number
}): GapProbe {
  const running = { on: true }
  let next = 0
  const loops = replicas.map(async (replica) => {
    const samples: Array<{ at: number, ok: boolean }> = []
    while (running.on) {
      const key = `${options.keyPrefix}-${next++}`
      const { path, body } = requestOf({ key, kind: 'offer' })
      const at = options.now()
      const ok = await fetch(`${replica.url}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${options.clientKey}`,
          'content-type': 'application/json',
          'idempotency-key': key
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(2000)
      }).then(async (res) => {
        await res.arrayBuffer()
        return res.ok
      }, () => false)
      samples.push({ at, ok })
      await sleep(options.pauseMs ?? 25)
    }
    const first = samples.findIndex(sample => !sample.ok)
    const last = samples.findLastIndex(sample => !sample.ok)
    const accepted = samples.slice(last + 1).find(sample => sample.ok)
    if (first === -1) return [replica.name, 0] as const
    return [replica.name, (accepted?.at ?? samples.at(-1)!.at) - samples[first]!.at] as const
  })
  return {
    async stop () {
      running.on = false
      const byReplica = Object.fromEntries(await Promise.all(loops))
      return { longestMs: Math.max(0, ...Object.values(byReplica)), byReplica }
    }
  }
}

/** A metric's value (the sum of its series) in a Prometheus text, or undefined. */
export function metricValue (text: string, name: string): number | undefined {
  let total: number | undefined
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{[^}]*\})? (\S+)$/.exec(line)
    if (match?.[1] === name) total = (total ?? 0) + Number(match[2])
  }
  return total
}

async function metrics (replica: Gateway): Promise<string | undefined> {
  try {
    const res = await fetch(`${replica.url}/metrics`, { signal: AbortSignal.timeout(2000) })
    return res.ok ? await res.text() : undefined
  } catch {
    return undefined
  }
}

/** One replica's flushes of outcomes that waited for Redis, as its metrics count them. */
export interface FlushCount { replica: string, incarnation: number, count: number, seconds: number }

/** Every replica's flush counts now (those that do not answer are left out). */
export async function flushCounts (replicas: readonly Gateway[]): Promise<FlushCount[]> {
  type Count = FlushCount | undefined
  const counts = await Promise.all(replicas.map(async (replica): Promise<Count> => {
    const text = await metrics(replica)
    if (text === undefined) return undefined
    const count = metricValue(text, 'gateway_idempotency_flush_seconds_count') ?? 0
    const seconds = metricValue(text, 'gateway_idempotency_flush_seconds_sum') ?? 0
    return { replica: replica.name, incarnation: replica.process.incarnation, count, seconds }
  }))
  return counts.filter(count => count !== undefined)
}

/** Waits (bounded) until no replica has outcomes waiting for Redis, as their gauges say. */
export async function settled (replicas: readonly Gateway[], timeoutMs: number): Promise<boolean> {
  return await waitFor(async () => {
    const texts = await Promise.all(replicas.map(metrics))
    const waiting = (text: string | undefined) =>
      text === undefined ? undefined : metricValue(text, 'gateway_idempotency_unsettled')
    return texts.every(text => waiting(text) === 0)
  }, timeoutMs, 'outcomes stored', 100).then(() => true, () => false)
}

/**
 * The flushes between two counts, replica by replica (a replica that
 * restarted in between starts again from zero: left out): how many, and
 * the mean window of each replica's.
 */
export function flushesBetween (before: readonly FlushCount[],
  after: readonly FlushCount[]): Array<{ replica: string, count: number, meanMs: number }> {
  const flushes: Array<{ replica: string, count: number, meanMs: number }> = []
  for (const end of after) {
    const start = before.find(each =>
      each.replica === end.replica && each.incarnation === end.incarnation)
    if (start === undefined || end.count <= start.count) continue
    const count = end.count - start.count
    const meanMs = (end.seconds - start.seconds) * 1000 / count
    flushes.push({ replica: end.replica, count, meanMs })
  }
  return flushes
}
