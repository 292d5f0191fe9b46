import { execFile, execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { freePort, ManagedProcess, waitFor } from './processes.ts'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
/** What a replica runs: the built gateway, as `npm start` and the container do. */
const GATEWAY_ENTRY = join(ROOT, 'dist/main.js')

/**
 * The master's name in the Sentinel's configuration, as the gateways are told
 * (REDIS_SENTINEL_MASTER_NAME's default).
 */
export const MASTER_NAME = 'mymaster'
/**
 * How long the master may not answer before the Sentinel fails it over: longer than the Redis
 * restarts the suite makes.
 */
export const SENTINEL_DOWN_AFTER_MS = 5000

/** One redis-cli command; its output, trimmed. */
export async function redisCli (port: number, args: string[], password?: string): Promise<string> {
  const auth = password === undefined ? [] : ['-a', password, '--no-auth-warning']
  const { stdout } = await run(
    'redis-cli',
    ['-h', '127.0.0.1', '-p', String(port), ...auth, ...args],
    { timeout: 5000 }
  )
  return stdout.trim()
}

export interface RedisNode {
  name: string
  port: number
  process: ManagedProcess
  cli (...args: string[]): Promise<string>
}

export interface Gateway {
  /** gateway-1, gateway-2, ... as HAProxy names them. */
  name: string
  port: number
  url: string
  process: ManagedProcess
}

export interface Cluster {
  redis: RedisNode[]
  sentinel: { port: number, process: ManagedProcess, cli (...args: string[]): Promise<string> }
  gateways: Gateway[]
  haproxy: { url: string, process: ManagedProcess, config: string }
  /** The node the Sentinel names master now. */
  master (): Promise<RedisNode>
  /** Replicas in sync with the master the Sentinel names (0 when it cannot be asked). */
  inSync (): Promise<number>
  close (): Promise<void>
}

export interface ClusterOptions {
  dir: string
  replicas: number
  /** The gateway's settings (the hub's addresses and credentials, clients, timeouts). */
  gatewayEnv: Record<string, string>
}

/**
 * A Redis data node's configuration: the append-only file fsynced on every
 * write (an acknowledged claim survives a crash), and writes refused while no
 * replica is in sync (an old master cut off by a failover takes no claim the
 * new one would not have). The Sentinel rewrites it when it changes the role.
 */
function redisConfig (port: number, dir: string, replicaOf?: number): string {
  return [
    `port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, 'daemonize no', 'save ""',
    'appendonly yes', 'appendfsync always',
    'maxmemory-policy noeviction',
    'min-replicas-to-write 1', 'min-replicas-max-lag 5', 'repl-diskless-sync-delay 0',
    ...(replicaOf === undefined ? [] : [`replicaof 127.0.0.1 ${replicaOf}`]),
    ''
  ].join('\n')
}

/**
 * deploy/haproxy.cfg with what only a container network has replaced: the
 * replicas' addresses (and no DNS resolvers section), a loopback bind, and
 * maxconn lowered when this machine's open-file limit cannot hold it. Every
 * other line, its timeouts, retries and health checks, is what is tested.
 */
export function haproxyConfig (
  port: number,
  servers: Array<{ name: string; port: number }>
): string {
  const text = readFileSync(join(ROOT, 'deploy/haproxy.cfg'), 'utf8')
  const lines: string[] = []
  let skipping = false
  let serversWritten = false
  const hardLimit = Number(execFileSync('sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).trim())
  for (const line of text.split('\n')) {
    if (/^resolvers\s/.test(line)) {
      skipping = true
      continue
    }
    if (skipping && /^\S/.test(line)) skipping = false
    if (skipping) continue
    if (/^\s+bind\s/.test(line)) {
      lines.push(`    bind 127.0.0.1:${port}`)
      continue
    }
    if (/^\s+server\s/.test(line)) {
      if (!serversWritten) {
        for (const server of servers) {
          lines.push(`    server ${server.name} ` +
          `127.0.0.1:${server.port}`)
        }
      }
      serversWritten = true
      continue
    }
    if (/^\s+default-server\s/.test(line)) {
      lines.push(line.replace(/\s+resolvers\s+\S+/, '').replace(/\s+init-addr\s+\S+/, ''))
      continue
    }
    const maxconn = /^(\s+maxconn\s+)(\d+)/.exec(line)
    if (
      maxconn !== null &&
      Number.isFinite(hardLimit) &&
      Number(maxconn[2]) * 2 + 100 > hardLimit
    ) {
      lines.push(`${maxconn[1]}${Math.floor((hardLimit - 100) / 2)}`)
      continue
    }
    lines.push(line)
  }
  if (!serversWritten) throw new Error('deploy/haproxy.cfg has no server lines to replace')
  return lines.join('\n')
}

async function httpReady (url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(1000) })
  await res.arrayBuffer()
  return res.status === 200
}

/**
 * The processes of the fault run, all on loopback: three Redis data nodes (a
 * master and two replicas, append-only), one Sentinel watching them, the
 * gateway replicas finding the master through it, and HAProxy in front of
 * the replicas.
 */
export async function startCluster ({
  dir,
  replicas,
  gatewayEnv
}: ClusterOptions): Promise<Cluster> {
  if (!existsSync(GATEWAY_ENTRY)) throw new Error(`no ${GATEWAY_ENTRY}: npm run build:gateway`)
  mkdirSync(dir, { recursive: true })
  const sentinelPassword = `sentinel-${Math.random().toString(36).slice(2)}`
  const [portA, portB, portC, sentinelPort, haproxyPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort()
  ]

  const node = (name: string, port: number, replicaOf?: number): RedisNode => {
    const data = join(dir, name)
    mkdirSync(data, { recursive: true })
    const configFile = join(data, 'redis.conf')
    writeFileSync(configFile, redisConfig(port, data, replicaOf))
    const cli = (...args: string[]) => redisCli(port, args)
    const process = new ManagedProcess({
      name,
      command: 'redis-server',
      args: [configFile],
      logFile: join(dir, `${name}.log`),
      ready: async () => (await cli('PING')) === 'PONG'
    })
    return { name, port, process, cli }
  }
  // A master and two replicas, as Sentinel deployments run: after a failover the new master has a
  // replica at once.
  const redis = [
    node('redis-a', portA),
    node('redis-b', portB, portA),
    node('redis-c', portC, portA)
  ]
  for (const each of redis) await each.process.start()
  const inSync = async (master: RedisNode) =>
    (await master.cli('INFO', 'replication'))
      .split('\n')
      .filter((line) => /^slave\d+:.*state=online/.test(line)).length
  await waitFor(
    async () => (await inSync(redis[0]!)) === redis.length - 1,
    20_000,
    'the replicas in sync'
  )

  const sentinelDir = join(dir, 'sentinel')
  mkdirSync(sentinelDir, { recursive: true })
  const sentinelFile = join(sentinelDir, 'sentinel.conf')
  writeFileSync(
    sentinelFile,
    [
      `port ${sentinelPort}`,
      'bind 127.0.0.1',
      `dir ${sentinelDir}`,
      `requirepass ${sentinelPassword}`,
      `sentinel monitor ${MASTER_NAME} 127.0.0.1 ${portA} 1`,
      `sentinel down-after-milliseconds ${MASTER_NAME} ${SENTINEL_DOWN_AFTER_MS}`,
      // A second failover of the same master may start twice this long after the first.
      `sentinel failover-timeout ${MASTER_NAME} 5000`,
      ''
    ].join('\n')
  )
  const sentinelCli = (...args: string[]) => redisCli(sentinelPort, args, sentinelPassword)
  const sentinel = {
    port: sentinelPort,
    cli: sentinelCli,
    process: new ManagedProcess({
      name: 'sentinel',
      command: 'redis-sentinel',
      args: [sentinelFile],
      logFile: join(dir, 'sentinel.log'),
      ready: async () => {
        const replicas = await sentinelCli('SENTINEL', 'REPLICAS', MASTER_NAME)
        return replicas.includes(String(portB)) && replicas.includes(String(portC))
      }
    })
  }
  await sentinel.process.start()
  const passwordFile = join(dir, 'sentinel-password')
  writeFileSync(passwordFile, `${sentinelPassword}\n`)

  const gateways: Gateway[] = []
  for (let i = 1; i <= replicas; i++) {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    gateways.push({
      name: `gateway-${i}`,
      port,
      url,
      process: new ManagedProcess({
        name: `gateway-${i}`,
        command: process.execPath,
        args: [GATEWAY_ENTRY],
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '/tmp',
          // A gateway run under c8 (npm test) reports its coverage too.
          ...(process.env.NODE_V8_COVERAGE === undefined
            ? {}
            : { NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE }),
          ...gatewayEnv,
          PORT: String(port),
          HOST: '127.0.0.1',
          REDIS_URL: `redis://${MASTER_NAME}`,
          REDIS_SENTINELS: `127.0.0.1:${sentinelPort}`,
          REDIS_SENTINEL_PASSWORD_FILE: passwordFile
        },
        logFile: join(dir, `gateway-${i}.log`),
        ready: async () => {
          const res = await fetch(`${url}/health/ready`, { signal: AbortSignal.timeout(1000) })
          const body = (await res.json()) as { data?: { redis?: string } }
          return res.status === 200 && body.data?.redis === 'up'
        },
        readyTimeoutMs: 60_000
      })
    })
  }
  await Promise.all(gateways.map((gateway) => gateway.process.start()))

  const config = haproxyConfig(
    haproxyPort,
    gateways.map(({ name, port }) => ({ name, port }))
  )
  const haproxyFile = join(dir, 'haproxy.cfg')
  writeFileSync(haproxyFile, config)
  const haproxyUrl = `http://127.0.0.1:${haproxyPort}`
  const haproxy = {
    url: haproxyUrl,
    config,
    process: new ManagedProcess({
      name: 'haproxy',
      command: 'haproxy',
      args: ['-db', '-f', haproxyFile],
      logFile: join(dir, 'haproxy.log'),
      ready: () => httpReady(`${haproxyUrl}/health/live`)
    })
  }
  await haproxy.process.start()

  return {
    redis,
    sentinel,
    gateways,
    haproxy,
    async master () {
      const [, port] = (
        await sentinelCli('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER_NAME)
      ).split('\n')
      const found = redis.find((each) => each.port === Number(port))
      if (found === undefined) {
        throw new Error('the Sentinel names an unknown master (port ' +
        `${port})`)
      }
      return found
    },
    async inSync () {
      const [, port] = (
        await sentinelCli('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', MASTER_NAME)
      ).split('\n')
      const master = redis.find((each) => each.port === Number(port))
      return master === undefined ? 0 : await inSync(master)
    },
    async close () {
      await haproxy.process.stop('SIGTERM')
      await Promise.all(gateways.map((gateway) => gateway.process.stop('SIGKILL')))
      await sentinel.process.stop('SIGTERM')
      await Promise.all(redis.map((each) => each.process.stop('SIGTERM')))
    }
  }
}
