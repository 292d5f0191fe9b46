import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { Redis } from 'ioredis'
import pino from 'pino'
import { createRedisConnection, type RedisConnection, type RedisConnectionOptions } from '../../src/state/redis/connection.ts'
import { freePort } from '../free-port.ts'

/** The subset of a tap `Test` the helpers use. */
interface TestLike { teardown (fn: () => unknown): void }

export interface RedisServer {
  readonly port: number
  /** redis://127.0.0.1:port (rediss:// with TLS), with the credentials when the server wants some. */
  readonly url: string
  /** Stops the server (SIGTERM) and waits for it to exit; its data is gone (persistence is off). */
  stop (): Promise<void>
  /** Starts it again on the same port and waits until it accepts connections. */
  start (): Promise<void>
  /** Freezes the server (SIGSTOP): connections stay open, nothing is answered. */
  pause (): void
  resume (): void
}

export interface RedisServerOptions {
  /** An ACL user with this password (and the default user disabled), allowed everything unless `rules` (ACL SETUSER rules) say otherwise. */
  user?: { name: string, password: string, rules?: string[] }
  /** TLS only (rediss://), with this certificate and key (PEM files). */
  tls?: { certFile: string, keyFile: string }
  /** Further redis-server options, such as `--aclfile <file>`. */
  args?: string[]
}

/** How long redis-server and a first connection to it may take: a guard against "never". */
const STARTUP_MS = 60_000

/**
 * The ACL rules of each user of deploy/redis-users.rules (what
 * deploy/init-secrets.sh writes into redis-users.acl), with `prefix` for
 * {prefix}: `{ default, gateway, functions }`.
 */
export function redisUserRules (prefix: string): Record<string, string> {
  const text = readFileSync(new URL('../../deploy/redis-users.rules', import.meta.url), 'utf8')
  return Object.fromEntries(text.split('\n').filter(line => line.trim() !== '' && !line.startsWith('#')).map(line => {
    const [user = '', ...rules] = line.trim().split(/\s+/)
    return [user, rules.join(' ').replaceAll('{prefix}', prefix)]
  }))
}

/**
 * A real redis-server (the Debian package's binary on PATH) on a free
 * loopback port, persistence off, stopped in teardown. No redis-server, or
 * one that does not come up, is an error: these tests never skip.
 */
export async function startRedisServer (t: TestLike, options: RedisServerOptions = {}): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-redis-'))
  const port = await freePort()
  const args = ['--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--loglevel', 'notice']
  if (options.tls === undefined) args.push('--port', String(port))
  else args.push('--port', '0', '--tls-port', String(port), '--tls-cert-file', options.tls.certFile, '--tls-key-file', options.tls.keyFile, '--tls-auth-clients', 'no')
  if (options.user !== undefined) {
    args.push('--user', 'default', 'off', '--user', options.user.name, 'on', `>${options.user.password}`, ...(options.user.rules ?? ['~*', '&*', '+@all']))
  }
  args.push(...options.args ?? [])
  let child: ChildProcess | undefined

  async function start (): Promise<void> {
    if (child !== undefined) throw new Error('redis-server is already running')
    const started = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] })
    child = started
    let output = ''
    await new Promise<void>((resolve, reject) => {
      const fail = (reason: string) => {
        clearTimeout(timeout)
        started.kill('SIGKILL')
        child = undefined
        reject(new Error(`redis-server could not be started on port ${port}: ${reason}${output === '' ? '' : `\n${output}`}`))
      }
      const timeout = setTimeout(() => fail(`not ready after ${STARTUP_MS} ms`), STARTUP_MS)
      started.once('error', (error) => fail(`${error.message} (install the redis-server package)`))
      started.once('exit', (code) => fail(`exited with ${code}`))
      // The server goes on writing (its shutdown too): read all of it, act on the first ready line.
      let ready = false
      const read = (chunk: Buffer) => {
        if (ready) return
        output += chunk.toString()
        if (output.includes('Ready to accept connections')) {
          ready = true
          clearTimeout(timeout)
          started.removeAllListeners('exit')
          started.removeAllListeners('error')
          resolve()
        }
      }
      started.stdout.on('data', read)
      started.stderr.on('data', read)
    })
  }

  async function stop (): Promise<void> {
    const running = child
    if (running === undefined) return
    child = undefined
    if (running.exitCode !== null || running.signalCode !== null) return
    const exited = new Promise(resolve => running.once('exit', resolve))
    running.kill('SIGCONT')
    running.kill('SIGTERM')
    await exited
  }

  await start()
  t.teardown(async () => {
    await stop()
    rmSync(dir, { recursive: true, force: true })
  })
  const credentials = options.user === undefined ? '' : `${encodeURIComponent(options.user.name)}:${encodeURIComponent(options.user.password)}@`
  return {
    port,
    url: `${options.tls === undefined ? 'redis' : 'rediss'}://${credentials}127.0.0.1:${port}`,
    stop,
    start,
    pause () { child?.kill('SIGSTOP') },
    resume () { child?.kill('SIGCONT') }
  }
}

/** Log lines written by a connection, parsed, for tests that read them. */
export type LogLines = Array<Record<string, unknown>>

/** A debug-level logger whose lines, parsed, are pushed to `lines` (dropped without). */
export function testLog (lines?: LogLines) {
  return pino({ level: 'debug' }, new Writable({
    write (chunk: Buffer, _encoding, done) {
      lines?.push(JSON.parse(chunk.toString()))
      done()
    }
  }))
}

export interface TestConnectionOptions extends Partial<Omit<RedisConnectionOptions, 'log'>> {
  /** Where the log lines go (default: dropped). */
  logs?: LogLines
}

/**
 * Test settings: short checks and backoff so that outages and recoveries show within the
 * suite's budget. The command timeout is seconds: on a loaded machine a command to a healthy
 * Redis may take hundreds of ms, and a test not about the timeout must not see it fire. A test
 * that a call does not wait bounds it well under this timeout.
 */
export const TEST_TIMEOUTS = {
  commandTimeoutMs: 3000, healthCheckIntervalMs: 100, reconnectMaxDelayMs: 100
}

/**
 * The bound of a call that must not wait (Redis known down, a refusal at once): half the
 * command timeout, so that a call that waited for it fails, and a slow machine's delays pass.
 */
export const AT_ONCE_MS = TEST_TIMEOUTS.commandTimeoutMs / 2

/**
 * A connection as one replica would hold it, closed in teardown, up before it
 * is returned (a test that needs a connection to a server that is down builds its own).
 */
export async function connect (t: TestLike, server: RedisServer, options: TestConnectionOptions = {}): Promise<RedisConnection> {
  const { logs, ...rest } = options
  const connection = createRedisConnection({ url: server.url, keyPrefix: 'test:', log: testLog(logs), ...TEST_TIMEOUTS, ...rest })
  t.teardown(() => connection.close())
  if (!await connection.whenUp(STARTUP_MS)) throw new Error('the test connection to redis-server did not come up')
  return connection
}

/** The least `until` waits before it fails: a guard against "never", as test/helper.ts's. */
const UNTIL_GUARD_MS = 60_000

/**
 * Resolves when `check` holds, polling; rejects after `timeoutMs` or UNTIL_GUARD_MS, whichever
 * is longer (a guard against "never": a busy machine takes many times as long). For states with
 * no event to wait on.
 */
export async function until (check: () => boolean | Promise<boolean>, timeoutMs = 5000, label = 'condition'): Promise<void> {
  const guard = Math.max(timeoutMs, UNTIL_GUARD_MS)
  const deadline = Date.now() + guard
  for (;;) {
    if (await check()) return
    if (Date.now() > deadline) throw new Error(`${label} not reached within ${guard} ms`)
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

export interface Sentinel {
  readonly port: number
  /** `127.0.0.1:port`, as REDIS_SENTINELS lists it. */
  readonly address: string
  /** A command to the Sentinel (SENTINEL FAILOVER, SENTINEL GET-MASTER-ADDR-BY-NAME, ...). */
  command (...args: string[]): Promise<unknown>
  stop (): Promise<void>
}

export interface SentinelOptions {
  /** The master's name (default `mymaster`). */
  name?: string
  /** The Sentinel's own password (`requirepass`). */
  password?: string
  /** How long the master may not answer before it is judged down (default 1000 ms). */
  downAfterMs?: number
  /** The ACL user the Sentinel logs in to the master (and its replicas) as. */
  masterAuth?: { user: string, password: string }
}

/**
 * A real redis-sentinel (the Debian package's) watching `master`, with a
 * quorum of one, on a free loopback port; stopped in teardown. Its
 * configuration file is its own (Sentinel rewrites it).
 */
export async function startSentinel (t: TestLike, master: { port: number }, options: SentinelOptions = {}): Promise<Sentinel> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-sentinel-'))
  const port = await freePort()
  const name = options.name ?? 'mymaster'
  const file = join(dir, 'sentinel.conf')
  writeFileSync(file, [
    `port ${port}`, 'bind 127.0.0.1', `dir ${dir}`,
    `sentinel monitor ${name} 127.0.0.1 ${master.port} 1`,
    `sentinel down-after-milliseconds ${name} ${options.downAfterMs ?? 1000}`,
    `sentinel failover-timeout ${name} 5000`,
    ...(options.password === undefined ? [] : [`requirepass ${options.password}`]),
    ...(options.masterAuth === undefined ? [] : [`sentinel auth-user ${name} ${options.masterAuth.user}`, `sentinel auth-pass ${name} ${options.masterAuth.password}`]),
    ''
  ].join('\n'))
  const child = spawn('redis-sentinel', [file], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  await new Promise<void>((resolve, reject) => {
    const timeout = setTimeout(() => reject(new Error(`redis-sentinel not ready after ${STARTUP_MS} ms\n${output}`)), STARTUP_MS)
    child.once('error', (error) => { clearTimeout(timeout); reject(new Error(`${error.message} (install the redis-sentinel package)`)) })
    const read = (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes('+monitor master')) {
        clearTimeout(timeout)
        resolve()
      }
    }
    child.stdout.on('data', read)
    child.stderr.on('data', read)
  })
  const client = new Redis({ port, host: '127.0.0.1', ...(options.password === undefined ? {} : { password: options.password }) })
  client.on('error', () => {})
  async function stop () {
    client.disconnect()
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise(resolve => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  }
  t.teardown(async () => {
    await stop()
    rmSync(dir, { recursive: true, force: true })
  })
  return { port, address: `127.0.0.1:${port}`, command: (...args) => client.call(args[0] ?? 'PING', ...args.slice(1)), stop }
}

export interface FailoverSet {
  master: RedisServer
  replicas: RedisServer[]
  sentinel: Sentinel
  /** A connection through the Sentinel, as a replica holds one, up before it is returned. */
  connect (options?: TestConnectionOptions): Promise<RedisConnection>
  /** The server the Sentinel names master now. */
  named (): Promise<RedisServer>
}

/**
 * A master and two replicas (with `args` each) and a Sentinel that knows
 * both replicas in sync: what a Sentinel failover needs.
 */
export async function startFailoverSet (t: TestLike, args: string[] = []): Promise<FailoverSet> {
  const master = await startRedisServer(t, { args })
  const replicaArgs = [...args, '--replicaof', '127.0.0.1', String(master.port)]
  const replicas = [
    await startRedisServer(t, { args: replicaArgs }),
    await startRedisServer(t, { args: replicaArgs })
  ]
  const sentinel = await startSentinel(t, master)
  await until(async () => {
    const known = await sentinel.command('SENTINEL', 'REPLICAS', 'mymaster') as string[][]
    const ok = known.filter(fields => fields[fields.indexOf('master-link-status') + 1] === 'ok')
    return ok.length === 2
  }, 20_000, 'the Sentinel knows both replicas in sync')
  const servers = [master, ...replicas]
  return {
    master,
    replicas,
    sentinel,
    async connect ({ logs, ...rest } = {}) {
      const connection = createRedisConnection({
        url: 'redis://mymaster',
        keyPrefix: 'test:',
        log: testLog(logs),
        ...TEST_TIMEOUTS,
        sentinels: {
          addresses: [{ host: '127.0.0.1', port: sentinel.port }],
          masterName: 'mymaster'
        },
        ...rest
      })
      t.teardown(() => connection.close())
      if (!await connection.whenUp(STARTUP_MS)) throw new Error('not up through the Sentinel')
      return connection
    },
    async named () {
      const named = await sentinel.command('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'mymaster')
      const [, port] = named as string[]
      const found = servers.find(server => server.port === Number(port))
      if (found === undefined) throw new Error(`the Sentinel names port ${port}`)
      return found
    }
  }
}
