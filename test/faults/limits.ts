import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import type { Target } from './workload.ts'

const LOOKUP = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`

export interface ProbePhase { name: string, sent: number, allowed: number, refused: number, failed: number }

/**
 * A client's rate limit through a Redis outage: lookups sent round-robin to
 * every replica before, during and after it, the answers counted. The bound
 * the docs give (docs/operations.md, "Rate limits through an outage"): its limit in Redis's window,
 * plus its limit in each replica process that counted on its own.
 */
export interface LimitProbe {
  client: string
  limit: number
  phases: ProbePhase[]
  /** Replica processes (name#incarnation) that answered the client. */
  processes: Set<string>
  allowed: number
  bound: number
}

export function newProbe (client: string, limit: number): LimitProbe {
  return { client, limit, phases: [], processes: new Set(), allowed: 0, bound: limit }
}

/** Sends `perReplica` lookups to each replica, interleaved, one at a time. */
export async function probePhase (probe: LimitProbe, name: string, key: string, replicas: Target[], perReplica: number): Promise<void> {
  const phase: ProbePhase = { name, sent: 0, allowed: 0, refused: 0, failed: 0 }
  probe.phases.push(phase)
  for (let i = 0; i < perReplica; i++) {
    for (const replica of replicas) {
      phase.sent++
      try {
        const res = await fetch(`${replica.url}${LOOKUP}`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(5000) })
        await res.arrayBuffer()
        if (res.status === 200) phase.allowed++
        else if (res.status === 429) phase.refused++
        else phase.failed++
        probe.processes.add(`${replica.name}#${replica.incarnation()}`)
      } catch {
        phase.failed++
      }
    }
  }
  probe.allowed = probe.phases.reduce((sum, each) => sum + each.allowed, 0)
  probe.bound = probe.limit * (1 + probe.processes.size)
}
