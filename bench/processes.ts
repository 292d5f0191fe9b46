// Child processes of the bench: spawning, readiness, memory sampling, and a
// guaranteed kill at the end (even on error or Ctrl-C).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

export interface Child {
  name: string
  proc: ChildProcess
  pid: number
  url: string
  /** File receiving the child's stdout and stderr. */
  logFile: string
  /** Last lines of output, for error messages. */
  tail: () => string
  /** Counts of the JSON log lines at warn level or above, by message (and `type` when present). */
  warnings: Map<string, number>
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<number | string | null>
}

const children = new Set<Child>()

/** A free loopback port (the small race before the child binds it is acceptable here). */
export async function freePort (host = '127.0.0.1'): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once('error', reject)
    server.listen(0, host, () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

export interface SpawnOptions {
  name: string
  /** The program (default: this Node), e.g. `taskset` to start it on a CPU (pinning.ts). */
  command?: string
  args: string[]
  env?: Record<string, string>
  cwd: string
  url: string
  logDir: string
}

export function spawnChild ({
  name,
  command = process.execPath,
  args,
  env,
  cwd,
  url,
  logDir
}: SpawnOptions): Child {
  const proc = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  if (proc.pid === undefined) throw new Error(`could not start ${name}`)
  const logFile = join(logDir, `${name}.log`)
  const log = createWriteStream(logFile)
  const lines: string[] = []
  const warnings = new Map<string, number>()
  const line = (text: string): void => {
    if (text.trim() === '') return
    lines.push(text)
    if (lines.length > 20) lines.shift()
    if (!text.startsWith('{')) return
    try {
      const entry = JSON.parse(text) as { level?: unknown; msg?: unknown; type?: unknown }
      if (typeof entry.level !== 'number' || entry.level < 40) return
      const key = `${typeof entry.msg === 'string' ? entry.msg : '(no message)'}` +
        `${typeof entry.type === 'string' ? ` (${entry.type})` : ''}`
      warnings.set(key, (warnings.get(key) ?? 0) + 1)
    } catch {}
  }
  const reader = (): ((chunk: Buffer) => void) => {
    let partial = ''
    return (chunk) => {
      log.write(chunk)
      const parts = (partial + chunk.toString('utf8')).split('\n')
      partial = parts.pop() ?? ''
      for (const part of parts) line(part)
    }
  }
  proc.stdout?.on('data', reader())
  proc.stderr?.on('data', reader())
  const exited = new Promise<number | string | null>((resolve) => {
    proc.once('exit', (code, signal) => {
      children.delete(child)
      resolve(code ?? signal)
    })
  })
  exited.finally(() => log.end()).catch(() => {})
  const child: Child = {
    name,
    proc,
    pid: proc.pid,
    url,
    logFile,
    tail: () => lines.join('\n'),
    warnings,
    exited
  }
  children.add(child)
  return child
}

/**
 * Polls `url` until it answers 200, the child exits, or the time runs out: a guard against a
 * server that never gets ready, not a judgement of its speed (beside other work on two cores,
 * servers that start in seconds took over 30).
 */
export async function waitReady (child: Child, path: string, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let exited = false
  child.exited.then(() => { exited = true }, () => {})
  let last = ''
  while (Date.now() < deadline) {
    if (exited) throw new Error(`${child.name} exited before it was ready:\n${child.tail()}`)
    try {
      const res = await fetch(child.url + path, { signal: AbortSignal.timeout(2000) })
      await res.arrayBuffer()
      if (res.status === 200) return
      last = `status ${res.status}`
    } catch (error) {
      last = (error as Error).message
    }
    await sleep(100)
  }
  throw new Error(`${child.name} not ready after ${timeoutMs} ms (${last}):\n${child.tail()}`)
}

/** Stops one child: SIGTERM, then SIGKILL after `graceMs`. */
export async function stopChild (child: Child, graceMs = 5000): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return
  child.proc.kill('SIGTERM')
  const timer = setTimeout(() => child.proc.kill('SIGKILL'), graceMs)
  await child.exited
  clearTimeout(timer)
}

export async function stopAll (): Promise<void> {
  await Promise.all([...children].map(async (child) => await stopChild(child)))
}

/** Last resort: whatever happens to the runner, no child outlives it. */
process.once('exit', () => {
  for (const child of children) child.proc.kill('SIGKILL')
})

export interface Memory {
  /** Resident set size, MB. */
  rssMb: number
  /** Peak resident set size since the process started (VmHWM), MB. */
  hwmMb: number
}

/** VmRSS and VmHWM of a process from /proc (Linux); undefined elsewhere. */
export async function memoryOf (pid: number): Promise<Memory | undefined> {
  let status: string
  try {
    status = await readFile(`/proc/${pid}/status`, 'utf8')
  } catch {
    return undefined
  }
  const kb = (name: string): number => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)
    return match?.[1] !== undefined ? Number(match[1]) : Number.NaN
  }
  return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 }
}

export interface MemorySampler {
  /** Stops sampling; the peak RSS seen during the sampling window, MB. */
  stop (): Promise<number | undefined>
}

/**
 * Samples VmRSS every `intervalMs`. When VmHWM grew during the window, the
 * window contains the process's all-time peak, so VmHWM is exact; otherwise
 * the largest sample is reported.
 */
export async function sampleMemory (pid: number, intervalMs = 100): Promise<MemorySampler> {
  const before = await memoryOf(pid)
  let peak = before?.rssMb
  let busy = false
  const timer = setInterval(() => {
    if (busy) return
    busy = true
    memoryOf(pid).then((m) => {
      if (m !== undefined && (peak === undefined || m.rssMb > peak)) peak = m.rssMb
    }, () => {}).finally(() => { busy = false })
  }, intervalMs)
  return {
    async stop () {
      clearInterval(timer)
      const after = await memoryOf(pid)
      if (after === undefined) return peak
      if (before !== undefined && after.hwmMb > before.hwmMb) return after.hwmMb
      return Math.max(peak ?? 0, after.rssMb)
    }
  }
}

let ticksPerSecond: number | undefined

/**
 * The kernel's clock ticks per second (USER_HZ), in which /proc reports CPU time: `getconf
 * CLK_TCK`.
 */
export function clockTicks (): number {
  if (ticksPerSecond === undefined) {
    const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })
    const n = Number(r.stdout?.trim())
    // 100 on every Linux the bench is meant for; getconf is in libc-bin.
    ticksPerSecond = r.status === 0 && Number.isInteger(n) && n > 0 ? n : 100
  }
  return ticksPerSecond
}

/**
 * CPU time a process has used, user + system, seconds: utime and stime of
 * /proc/<pid>/stat, which count every thread of the process (the gateway's
 * transcoding threads too). Undefined when the process or /proc is gone.
 */
export async function cpuSecondsOf (pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    // Fields after the parenthesised command name, which may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / clockTicks()
  } catch {
    return undefined
  }
}

/**
 * Waits until none of `pids` uses more than `maxCores` CPU over a `windowMs`
 * window. A load run abandons its in-flight requests when it stops, and a
 * server keeps working on them: without this, that work would land in the
 * next measurement. Returns the seconds waited (capped at `timeoutMs`).
 */
export async function waitIdle (
  pids: number[],
  { maxCores = 0.1, windowMs = 300, timeoutMs = 60_000 } = {}
): Promise<number> {
  const start = Date.now()
  let before = await Promise.all(pids.map(cpuSecondsOf))
  for (;;) {
    await sleep(windowMs)
    const after = await Promise.all(pids.map(cpuSecondsOf))
    const busiest = Math.max(
      0,
      ...after.map((a, i) =>
        a !== undefined && before[i] !== undefined
          ? (a - (before[i] as number)) / (windowMs / 1000)
          : 0
      )
    )
    if (busiest <= maxCores || Date.now() - start > timeoutMs) return (Date.now() - start) / 1000
    before = after
  }
}

/**
 * One variable of a running process's environment as it was started (/proc/<pid>/environ);
 * undefined when unset or unreadable.
 */
export async function environmentOf (pid: number, name: string): Promise<string | undefined> {
  try {
    const entries = (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0')
    return entries.find(entry => entry.startsWith(`${name}=`))?.slice(name.length + 1)
  } catch {
    return undefined
  }
}

/** What a child logged at warn level or above since `before` (a copy of its `warnings`). */
export function warningsSince (child: Child, before: Map<string, number>): string | undefined {
  const parts: string[] = []
  for (const [message, n] of child.warnings) {
    const delta = n - (before.get(message) ?? 0)
    if (delta > 0) parts.push(`${delta}× "${message}"`)
  }
  return parts.length > 0 ? parts.join(', ') : undefined
}

/**
 * CPU time used by the whole machine (all cores, idle and iowait excluded), seconds, from
 * /proc/stat.
 */
async function machineCpuSeconds (): Promise<number | undefined> {
  try {
    const stat = await readFile('/proc/stat', 'utf8')
    const fields = (stat.split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number)
    // user nice system idle iowait irq softirq steal
    const busy = [0, 1, 2, 5, 6, 7].reduce((sum, i) => sum + (fields[i] ?? 0), 0)
    return busy / clockTicks()
  } catch {
    return undefined
  }
}

export interface CpuUse {
  /** CPU seconds the measured process used in the window (all its threads). */
  targetSeconds: number | undefined
  /** Cores the measured process used on average. */
  targetCores: number | undefined
  /** Cores the load side used on average: the runner (autocannon) and the upstream (and Redis). */
  loadCores: number | undefined
  /** Cores used by processes that are not the bench's (other work on a shared machine). */
  otherCores: number | undefined
}

/**
 * Measures, over a window, the CPU of the target process, of the load side
 * (`loadPids` plus the runner itself), and of everything that is not the
 * bench (`ownPids` plus the runner): a noisy neighbour shows up as
 * `otherCores`, a saturated load generator as `loadCores` near 1.
 */
export async function meterCpu (
  targetPid: number,
  { loadPids, ownPids }: { loadPids: number[]; ownPids: number[] }
): Promise<{ stop: () => Promise<CpuUse> }> {
  const pids = [...new Set([process.pid, targetPid, ...loadPids, ...ownPids])]
  const load = new Set([process.pid, ...loadPids])
  const snapshot = async (): Promise<{
    at: number
    machine: number | undefined
    own: Array<number | undefined>
  }> => {
    const [machine, ...own] = await Promise.all([machineCpuSeconds(), ...pids.map(cpuSecondsOf)])
    return { at: performance.now(), machine, own }
  }
  const before = await snapshot()
  return {
    async stop () {
      const after = await snapshot()
      const seconds = (after.at - before.at) / 1000
      const delta = (i: number): number | undefined =>
        after.own[i] !== undefined && before.own[i] !== undefined
          ? (after.own[i] as number) - (before.own[i] as number)
          : undefined
      const perSecond = (n: number | undefined): number | undefined =>
        n !== undefined && seconds > 0 ? n / seconds : undefined
      const ownTotal = pids.reduce((sum, _pid, i) => sum + (delta(i) ?? 0), 0)
      const loadTotal = pids.reduce(
        (sum, pid, i) => (load.has(pid) ? sum + (delta(i) ?? 0) : sum),
        0
      )
      const targetSeconds = delta(pids.indexOf(targetPid))
      return {
        targetSeconds,
        targetCores: perSecond(targetSeconds),
        loadCores: perSecond(loadTotal),
        otherCores:
          after.machine !== undefined && before.machine !== undefined
            ? perSecond(Math.max(0, after.machine - before.machine - ownTotal))
            : undefined
      }
    }
  }
}
