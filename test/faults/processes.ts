import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, openSync } from 'node:fs'
import { freePort } from '../helpers/free-port.ts'

export { freePort }

export const sleep = (ms: number) => new Promise<void>(resolve => setTimeout(resolve, ms))

/** Resolves when `check` holds, polling every `everyMs`; rejects after `timeoutMs`. */
export async function waitFor (
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  label: string,
  everyMs = 50
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      if (await check()) return
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(`${label}: not within ${timeoutMs} ms`)
    await sleep(everyMs)
  }
}

export interface ProcessSpec {
  name: string
  command: string
  args: string[]
  env?: Record<string, string>
  cwd?: string
  /** Where stdout and stderr go, appended across restarts. */
  logFile: string
  /** Resolves true once the process serves (polled after each start). */
  ready: () => Promise<boolean>
  readyTimeoutMs?: number
}

/**
 * One real process the suite starts, signals and starts again: its output
 * goes to a file (not through this process), its incarnations are counted
 * so that a request can be told which one answered it.
 */
export class ManagedProcess {
  readonly spec: ProcessSpec
  #child: ChildProcess | undefined
  #exited: Promise<void> = Promise.resolve()
  #incarnation = 0

  constructor (spec: ProcessSpec) {
    this.spec = spec
  }

  get name (): string {
    return this.spec.name
  }

  get pid (): number | undefined {
    return this.#child?.pid
  }

  get running (): boolean {
    return (
      this.#child !== undefined && this.#child.exitCode === null && this.#child.signalCode === null
    )
  }

  /** 1 for the first start, 2 after the first restart, ... */
  get incarnation (): number {
    return this.#incarnation
  }

  /** Resolves when the current incarnation has exited. */
  get exited (): Promise<void> {
    return this.#exited
  }

  /** Spawns it (it must not be running) and waits until it serves. */
  async start (): Promise<void> {
    if (this.running) throw new Error(`${this.name} is already running`)
    const out = openSync(this.spec.logFile, 'a')
    const child = spawn(this.spec.command, this.spec.args, {
      stdio: ['ignore', out, out],
      ...(this.spec.env === undefined ? {} : { env: this.spec.env }),
      ...(this.spec.cwd === undefined ? {} : { cwd: this.spec.cwd })
    })
    closeSync(out)
    this.#child = child
    this.#incarnation++
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()))
    const spawnFailed = new Promise<never>((_resolve, reject) =>
      child.once('error', (error) => reject(new Error(`${this.name}: ${error.message}`)))
    )
    spawnFailed.catch(() => {})
    const exitedEarly = this.#exited.then(() => {
      throw new Error(`${this.name} exited while starting (see ${this.spec.logFile})`)
    })
    exitedEarly.catch(() => {})
    await Promise.race([
      waitFor(this.spec.ready, this.spec.readyTimeoutMs ?? 30_000, `${this.name} ready`, 50),
      spawnFailed,
      exitedEarly
    ])
  }

  /** Sends a signal to the running incarnation (SIGSTOP, SIGCONT, ...). */
  signal (signal: NodeJS.Signals): void {
    if (this.running) this.#child?.kill(signal)
  }

  /** Sends `signal` (SIGKILL by default) and waits for the exit. */
  async stop (signal: NodeJS.Signals = 'SIGKILL', timeoutMs = 20_000): Promise<void> {
    if (!this.running) return
    this.#child?.kill('SIGCONT')
    this.#child?.kill(signal)
    const timer = setTimeout(() => this.#child?.kill('SIGKILL'), timeoutMs)
    await this.#exited
    clearTimeout(timer)
  }
}
