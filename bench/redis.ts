// `--redis`: a redis-server on loopback, persistence off, for the gateways'
// REDIS_URL; the runner pins it beside the upstream, on the load side's CPU. What the bench
// reports of it: the server's version, and how many connections and commands
// it received from the gateways, which says whether they used it at all.
import { spawnSync } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { spawnChild, type Child } from './processes.ts'

export interface RedisActivity {
  /** Connections opened by others than the bench's own client. */
  connections: number
  /** Commands processed, the bench's own left out. */
  commands: number
}

export interface BenchRedis {
  child: Child
  version: string
  /** `redis://127.0.0.1:<port>/<db>`: each gateway gets a database of its own. */
  urlOf: (db: number) => string
  /** What the gateways did with it since start. */
  activity: () => Promise<RedisActivity>
  close: () => Promise<void>
}

/** The redis-server on PATH (Debian's redis-server package), or a clear error. */
function versionOfRedis (): string {
  const r = spawnSync('redis-server', ['--version'], { encoding: 'utf8' })
  if (r.error !== undefined || r.status !== 0) {
    throw new Error('--redis needs redis-server on ' +
    'PATH (the Debian package redis-server)')
  }
  return /v=(\S+)/.exec(r.stdout)?.[1] ?? r.stdout.trim()
}

function stat (info: string, name: string): number {
  return Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? Number.NaN)
}

export async function startRedis ({
  host,
  port,
  dir,
  env
}: {
  host: string
  port: number
  dir: string
  env: Record<string, string>
}): Promise<BenchRedis> {
  const version = versionOfRedis()
  const args = [
    '--bind',
    host,
    '--port',
    String(port),
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--daemonize',
    'no'
  ]
  const child = spawnChild({
    name: 'redis',
    command: 'redis-server',
    args,
    env,
    cwd: dir,
    url: `redis://${host}:${port}`,
    logDir: dir
  })
  // The bench's own client: one connection for the whole run, so that the
  // connections the gateways open are the server's count minus one.
  const client = new Redis({
    host,
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null
  })
  client.on('error', () => {})
  const deadline = Date.now() + 10_000
  for (;;) {
    try {
      await client.connect()
      break
    } catch (error) {
      if (Date.now() > deadline || child.proc.exitCode !== null) {
        throw new Error(
          `redis-server did not start on ${host}:${port}: ` +
          `${(error as Error).message}\n${child.tail()}`
        )
      }
      client.disconnect()
      await sleep(50)
    }
  }
  const counts = async (): Promise<{ connections: number; commands: number }> => {
    const info = await client.info('stats')
    return {
      connections: stat(info, 'total_connections_received'),
      commands: stat(info, 'total_commands_processed')
    }
  }
  const start = await counts()
  return {
    child,
    version,
    urlOf: (db) => `redis://${host}:${port}/${db}`,
    async activity () {
      const now = await counts()
      // The INFO that read `start` is counted in `now`, not in `start`.
      return {
        connections: now.connections - start.connections,
        commands: Math.max(0, now.commands - start.commands - 1)
      }
    },
    async close () {
      client.disconnect()
    }
  }
}
