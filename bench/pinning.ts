// Which CPU each bench process runs on. The server under test (gateway, raw
// proxy or reference server) gets a core of its own; the load generator
// (autocannon, in the runner) and the upstream share the other. Then a
// server's CPU time per answered request is its own work, not a share of a
// core it fights the load generator for. Node cannot set a process's CPU
// affinity, so the bench uses `taskset` (util-linux, in every Debian
// install) on each process, the runner included, with all its threads.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'

export type Role = 'server' | 'load'

export type Pinning =
  | { pinned: true, serverCpu: number, loadCpu: number, allowed: number[] }
  | { pinned: false, reason: string, allowed: number[] | undefined }

/** The CPUs of a kernel CPU list such as `0-3,6`. */
export function parseCpuList (list: string): number[] {
  const cpus: number[] = []
  for (const part of list.trim().split(',')) {
    if (part === '') continue
    const [from, to] = part.split('-').map(Number) as [number, number | undefined]
    for (let cpu = from; cpu <= (to ?? from); cpu++) cpus.push(cpu)
  }
  return cpus
}

function cpusAllowedList (status: string): string | undefined {
  return /^Cpus_allowed_list:\s*(\S+)/m.exec(status)?.[1]
}

/** The CPUs this process may run on (`Cpus_allowed_list`); undefined without /proc. */
function allowedCpus (): number[] | undefined {
  try {
    const list = cpusAllowedList(readFileSync('/proc/self/status', 'utf8'))
    return list === undefined ? undefined : parseCpuList(list)
  } catch {
    return undefined
  }
}

/**
 * The plan: the first CPU this process may use for the load side, the last
 * for the server under test. Unpinned, with the reason, when asked not to
 * pin, on a machine with one CPU, or without taskset.
 */
export function planPinning (wanted: boolean): Pinning {
  const allowed = allowedCpus()
  if (!wanted) return { pinned: false, reason: 'not pinned (`--no-pin`)', allowed }
  if (allowed === undefined) {
    return {
      pinned: false,
      reason: 'not pinned: no /proc/self/status to read the CPUs from (not Linux)',
      allowed
    }
  }
  if (allowed.length < 2) {
    return {
      pinned: false,
      reason: `not pinned: this machine lets the bench use one CPU (${allowed.join(',')}), which ` +
        'every process shares',
      allowed
    }
  }
  const taskset = spawnSync('taskset', ['--version'], { encoding: 'utf8' })
  if (taskset.status !== 0) {
    return {
      pinned: false,
      reason: 'not pinned: `taskset` ' +
    '(util-linux) is not installed',
      allowed
    }
  }
  return {
    pinned: true,
    loadCpu: allowed[0] as number,
    serverCpu: allowed[allowed.length - 1] as number,
    allowed
  }
}

function taskset (args: string[]): void {
  const r = spawnSync('taskset', args, { encoding: 'utf8' })
  if (r.status !== 0) {
    throw new Error(
      `taskset ${args.join(' ')} failed: ${(r.stderr ?? '').trim() || `exit ${String(r.status)}`}`
    )
  }
}

/**
 * Pins a running process, every thread it has, to the CPU of `role`; the
 * threads it starts later inherit it. Processes are pinned once they are
 * ready, so that they start up on every CPU, in parallel.
 */
export function pinProcess (pinning: Pinning, role: Role, pid: number): void {
  if (!pinning.pinned) return
  taskset([
    '--all-tasks',
    '--cpu-list',
    '--pid',
    String(role === 'server' ? pinning.serverCpu : pinning.loadCpu),
    String(pid)
  ])
}

/** The CPUs each thread of a running process may use, as the kernel says (`Cpus_allowed_list`). */
async function cpusOfThreads (pid: number): Promise<string[]> {
  let tasks: string[]
  try {
    tasks = await readdir(`/proc/${pid}/task`)
  } catch {
    return []
  }
  const lists = await Promise.all(tasks.map(async (tid) => {
    try {
      return cpusAllowedList(await readFile(`/proc/${pid}/task/${tid}/status`, 'utf8'))
    } catch {
      return undefined // the thread ended meanwhile
    }
  }))
  return [...new Set(lists.filter((l): l is string => l !== undefined))]
}

/**
 * Checks that every thread of each process runs where the plan puts it, and
 * returns the CPU lists seen by name. Throws when one runs elsewhere: a
 * report must not call a run pinned that was not.
 */
export async function checkPinning (
  pinning: Pinning,
  processes: Array<{ name: string; pid: number; role: Role }>
): Promise<Array<{ name: string; cpus: string }>> {
  const seen: Array<{ name: string; cpus: string }> = []
  for (const { name, pid, role } of processes) {
    const lists = await cpusOfThreads(pid)
    const cpus = lists.length > 0 ? lists.join(' and ') : 'unknown'
    if (pinning.pinned) {
      const expected = String(role === 'server' ? pinning.serverCpu : pinning.loadCpu)
      if (cpus !== expected) {
        throw new Error(
          `${name} (pid ${pid}) has threads that may run on CPUs ${cpus}, not only on CPU ` +
          `${expected} as planned`
        )
      }
    }
    seen.push({ name, cpus })
  }
  return seen
}
