import { readFileSync } from 'node:fs'
import { Redis } from 'ioredis'
import { codeOf } from './errors.ts'
import { FUNCTION_LIBRARY, loadFunctionLibrary } from './state/redis/functions.ts'

/**
 * The gateway's Redis function library, for the administrator's step that
 * loads it where the gateway's own Redis user may not (docs/deployment.md#redis):
 *
 *   node dist/redis-functions.js                 prints the library
 *                                                (… | redis-cli --user admin --askpass -x FUNCTION LOAD)
 *   node dist/redis-functions.js --load FILE     loads it over the redis:// or rediss:// URL
 *                                                held in FILE (a mounted secret), unless
 *                                                that Redis has it already, then exits
 *
 * Loading is idempotent: a library already there is left as it is (its name
 * holds a hash of its code). deploy/compose.yaml runs `--load` once before
 * the replicas start.
 */

const USAGE = 'usage: redis-functions [--load FILE]   (FILE: a redis:// URL of a user allowed FUNCTION LIST and LOAD)'
const CONNECT_ATTEMPTS = 20

function fail (message: string): never {
  process.stderr.write(`redis-functions: ${message}\n`)
  process.exit(1)
}

const args = process.argv.slice(2)
if (args.length === 0) {
  process.stdout.write(FUNCTION_LIBRARY.code)
} else if (args.length === 2 && args[0] === '--load' && args[1] !== undefined) {
  let url: string
  try {
    url = readFileSync(args[1], 'utf8').trim()
  } catch (error) {
    fail(`cannot read ${args[1]}: ${codeOf(error) ?? String(error)}`)
  }
  if (!/^rediss?:\/\//i.test(url)) fail(`${args[1]} does not hold a redis:// or rediss:// URL`)
  const client = new Redis(url, {
    // Only FUNCTION LIST and LOAD are sent: no INFO ready check, no CLIENT SETINFO (the loading user may run neither).
    enableReadyCheck: false,
    disableClientInfo: true,
    // FUNCTION LOAD waits for the connection while attempts last (Redis may be starting).
    maxRetriesPerRequest: null,
    retryStrategy: (attempt) => (attempt > CONNECT_ATTEMPTS ? null : Math.min(attempt * 250, 2000)),
    ...(/^rediss:/i.test(url) ? { tls: {} } : {})
  })
  // Reported by the command below; messages name the address, never the password.
  client.on('error', () => {})
  try {
    // Asked first (FUNCTION LIST, a read): a replica, such as a data node that
    // a failover demoted, refuses FUNCTION LOAD even of a library it holds.
    const listed = await client.function('LIST', 'LIBRARYNAME', FUNCTION_LIBRARY.name) as unknown[]
    const outcome = listed.length > 0 ? 'present' : await loadFunctionLibrary(client)
    process.stdout.write(`${outcome === 'loaded' ? 'loaded' : 'already loaded:'} the gateway's Redis function library ${FUNCTION_LIBRARY.name}\n`)
  } catch (error) {
    fail(`could not load the function library ${FUNCTION_LIBRARY.name}: ${error instanceof Error ? error.message : String(error)}`)
  } finally {
    client.disconnect()
  }
} else {
  fail(USAGE)
}
