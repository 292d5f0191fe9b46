import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { test } from 'tap'
import {
  announcedMaster, createRedisConnection, isWriteRefused, reconnectOnReadOnly, replicasInSync
} from '../../src/state/redis/connection.ts'
import type { StoreHealth } from '../../src/state/types.ts'
import {
  AT_ONCE_MS, connect, startFailoverSet, startRedisServer, startSentinel, TEST_TIMEOUTS, testLog,
  until,
  type LogLines
} from './redis-server.ts'

test('every key, script key and channel carries the prefix', async (t) => {
  const server = await startRedisServer(t)
  const connection = await connect(t, server, { keyPrefix: 'gw-a:' })
  const raw = new Redis(server.url)
  t.teardown(() => raw.disconnect())

  await connection.client.set('plain', '1')
  await connection.scripts.stateClaim('scripted', 'claim', 10_000)
  // The health check's own key (it writes, so that a Redis refusing writes shows) is under the prefix too.
  await until(async () => await raw.exists('gw-a:health') === 1, 3000, 'the health check wrote its key')
  t.same((await raw.keys('*')).sort(), ['gw-a:health', 'gw-a:plain', 'gw-a:scripted'], 'keys written through the connection')
  t.equal(await connection.scripts.stateRelease('scripted', 'claim'), 1, 'a script finds its key under the prefix')
  t.same((await raw.keys('*')).sort(), ['gw-a:health', 'gw-a:plain'])

  await connection.scripts.eventsAppend('events:log', 'events:appended:t1', 10, '0-0', '{}', '1',
    60_000, 0, 't1')
  t.same((await raw.keys('gw-a:events:*')).sort(), ['gw-a:events:appended:t1', 'gw-a:events:log'], 'the event stream too, and the token of an append')
  const reader = connection.reader(100)
  await until(() => reader.status === 'ready', 2000, 'reader ready')
  const read = await reader.xread('COUNT', 1, 'STREAMS', 'events:log', '0-0') as Array<[string, unknown[]]>
  t.equal(read[0]?.[0], 'gw-a:events:log', 'the reader reads under the prefix too (the keys of XREAD STREAMS)')
})

test('the user and password of the URL are used, and a wrong password never reaches a log line', async (t) => {
  const user = { name: 'gateway', password: 'right-9f2e7c' }
  const server = await startRedisServer(t, { user })
  const connection = await connect(t, server)
  t.equal(await connection.client.ping(), 'PONG', 'authenticated')

  const logs: LogLines = []
  const wrong = createRedisConnection({ url: `redis://gateway:wrong-4b1d0a@127.0.0.1:${server.port}`, keyPrefix: 'test:', log: testLog(logs), ...TEST_TIMEOUTS })
  t.teardown(() => wrong.close())
  t.equal(await wrong.whenUp(300), false, 'a wrong password never comes up')
  t.equal(wrong.health(), 'down')
  const text = JSON.stringify(logs)
  t.match(text, /WRONGPASS/, 'the reason is logged')
  t.notMatch(text, /wrong-4b1d0a|right-9f2e7c/, 'no password in the logs')

  t.throws(() => createRedisConnection({ url: 'http://gateway:secret-77aa@127.0.0.1:1', keyPrefix: '', log: testLog(), commandTimeoutMs: 100 }),
    { message: 'the Redis URL must start with redis:// or rediss://, not http://' }, 'another scheme is refused without echoing the URL')
  t.throws(() => createRedisConnection({ url: 'secret-77aa', keyPrefix: '', log: testLog(), commandTimeoutMs: 100 }),
    { message: /^the Redis URL is not a URL/ }, 'not a URL')
})

test('rediss:// speaks TLS, whatever the case of its scheme, trusting the CA given', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-redis-tls-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const certFile = join(dir, 'cert.pem')
  const keyFile = join(dir, 'key.pem')
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', certFile], { stdio: 'ignore' })
  const user = { name: 'gateway', password: 'tls-5c3a' }
  const server = await startRedisServer(t, { user, tls: { certFile, keyFile } })
  t.match(server.url, /^rediss:\/\//)
  const ca = readFileSync(certFile)

  for (const url of [server.url, server.url.replace('rediss://', 'REDISS://')]) {
    const connection = await connect(t, { ...server, url }, { tls: { ca } })
    await connection.client.set('over-tls', url)
    t.equal(await connection.client.get('over-tls'), url, `${url.slice(0, 9)}: commands over TLS`)
  }

  const plain = createRedisConnection({ url: server.url.replace('rediss://', 'redis://'), keyPrefix: 'test:', log: testLog(), ...TEST_TIMEOUTS })
  const untrusted = createRedisConnection({ url: server.url, keyPrefix: 'test:', log: testLog(), ...TEST_TIMEOUTS })
  t.teardown(() => Promise.all([plain.close(), untrusted.close()]))
  t.same(await Promise.all([plain.whenUp(300), untrusted.whenUp(300)]), [false, false], 'the TLS port does not answer plain text, and an unknown CA is not trusted')
})

test('health follows the server: down when it stops, up when it is back; commands fail at once meanwhile', async (t) => {
  const server = await startRedisServer(t)
  const logs: LogLines = []
  const connection = await connect(t, server, { logs })
  const changes: StoreHealth[] = []
  connection.onHealthChange(health => changes.push(health))

  await server.stop()
  await until(() => connection.health() === 'down', 2000, 'down')
  const started = performance.now()
  await t.rejects(connection.client.get('any'), 'a command while down fails')
  const took = performance.now() - started
  t.ok(took < AT_ONCE_MS, `and fails at once (${Math.round(took)} ms)`)

  await server.start()
  t.equal(await connection.whenUp(3000), true, 'reconnects on its own')
  t.equal(await connection.client.ping(), 'PONG')
  t.same(changes, ['down', 'up'], 'each change reported once')
  t.ok(logs.some(line => line.level === 40 && line.msg === 'redis down'), 'the outage is logged as a warning')
  t.ok(logs.some(line => line.level === 30 && line.msg === 'redis up'), 'and the recovery')
})

test('a frozen server is reported down by the health check and up when it answers again', async (t) => {
  const server = await startRedisServer(t)
  const logs: LogLines = []
  const connection = await connect(t, server, { logs })
  const reader = connection.reader(100)
  await until(() => reader.status === 'ready', 2000, 'reader ready')
  server.pause()
  const started = performance.now()
  await t.rejects(connection.client.get('any'), { message: 'Command timed out' })
  const waited = performance.now() - started
  // A margin of seconds for a loaded machine; without the timeout the command would wait forever.
  t.ok(waited < TEST_TIMEOUTS.commandTimeoutMs + 3000,
    `a command waits the command timeout at most (${Math.round(waited)} ms)`)
  await until(() => connection.health() === 'down', 2000, 'down')
  // A connection that stays open without answering may be half-open: it is dropped and reopened.
  await until(() => logs.filter(line => line.msg === 'redis connection not answering: reconnecting').length >= 1, 5000, 'the command connection reopened')
  await t.rejects(reader.xread('COUNT', 1, 'BLOCK', 100, 'STREAMS', 'events:log', '$'), { message: 'Command timed out' }, 'a blocking read waits its block time and the command timeout at most')
  server.resume()
  t.equal(await connection.whenUp(3000), true, 'up again')
  await until(() => reader.status === 'ready', 2000, 'the reader too')
  t.equal(await connection.client.ping(), 'PONG')
})

test('a Redis that answers but refuses writes (full under noeviction, a replica) is reported refusing-writes, and up once it takes them', async (t) => {
  const server = await startRedisServer(t)
  const logs: LogLines = []
  const connection = await connect(t, server, { logs })
  const raw = new Redis(server.url)
  t.teardown(() => raw.disconnect())
  const changes: StoreHealth[] = []
  connection.onHealthChange(health => changes.push(health))

  await raw.config('SET', 'maxmemory', '1')
  await until(() => connection.health() === 'refusing-writes', 2000, 'the health check writes, and sees the refusal')
  t.equal(await connection.client.ping(), 'PONG', 'though it answers')
  t.equal(connection.replicas(), 0)
  t.ok(logs.some(line => line.level === 40 && line.msg === 'redis refusing writes' && /^OOM/.test(String(line.reason))), 'logged with the reason')
  await raw.config('SET', 'maxmemory', '0')
  await until(() => connection.health() === 'up', 2000, 'up again')

  // A command that meets the refusal reports it at once, without waiting for the check.
  const other = await startRedisServer(t)
  const replica = await startRedisServer(t, { args: ['--replicaof', '127.0.0.1', String(other.port)] })
  const onReplica = await connect(t, replica, { healthCheckIntervalMs: 60_000 })
  const refused = await onReplica.client.set('k', 'v').catch((error: unknown) => error)
  t.ok(isWriteRefused(refused), 'READONLY')
  onReplica.noteError(refused)
  t.equal(onReplica.health(), 'refusing-writes', 'noted at once')
  onReplica.noteError(new Error('ERR something else'))
  t.equal(onReplica.health(), 'refusing-writes', 'other errors change nothing')
  t.same(changes, ['refusing-writes', 'up'])
})

test('replicas in sync are read from INFO replication: online, and acknowledging within seconds', async (t) => {
  t.equal(replicasInSync('# Replication\r\nrole:master\r\nconnected_slaves:0\r\n'), 0)
  t.equal(replicasInSync([
    'role:master', 'connected_slaves:3',
    'slave0:ip=10.0.0.2,port=6379,state=online,offset=100,lag=0',
    'slave1:ip=10.0.0.3,port=6379,state=wait_bgsave,offset=0,lag=0',
    'slave2:ip=10.0.0.4,port=6379,state=online,offset=90,lag=7'
  ].join('\r\n')), 1, 'one online with a small lag')
  t.equal(reconnectOnReadOnly(new Error('READONLY You can\'t write against a read only replica.')), 1, 'a replica: reconnect (through the Sentinels)')
  t.equal(reconnectOnReadOnly(new Error('OOM command not allowed')), false)
  t.ok(isWriteRefused(new Error('MISCONF Errors writing to the AOF file')))
  t.notOk(isWriteRefused(new Error('ERR wrong number of arguments')))
  t.notOk(isWriteRefused('OOM'), 'only errors')
})

test('with Sentinels, the connection asks them for the master and follows a failover by itself', async (t) => {
  const master = await startRedisServer(t)
  const replica = await startRedisServer(t, { args: ['--replicaof', '127.0.0.1', String(master.port)] })
  const sentinel = await startSentinel(t, master, { password: 'sentinel-pw-31c9' })
  const logs: LogLines = []
  const connection = createRedisConnection({
    url: 'redis://mymaster',
    keyPrefix: 'test:',
    log: testLog(logs),
    ...TEST_TIMEOUTS,
    sentinels: { addresses: [{ host: '127.0.0.1', port: sentinel.port }], masterName: 'mymaster', password: 'sentinel-pw-31c9' }
  })
  t.teardown(() => connection.close())
  t.equal(await connection.whenUp(5000), true, 'up through the Sentinel')
  await connection.client.set('before', '1')
  const onMaster = new Redis(master.url)
  const onReplica = new Redis(replica.url)
  t.teardown(() => { onMaster.disconnect(); onReplica.disconnect() })
  t.equal(await onMaster.get('test:before'), '1', 'written to the master')
  await until(async () => {
    const replicas = await sentinel.command('SENTINEL', 'REPLICAS', 'mymaster') as string[][]
    return replicas.some(fields => fields.includes('slave') && !String(fields[fields.indexOf('flags') + 1]).includes('down') && fields[fields.indexOf('master-link-status') + 1] === 'ok')
  }, 15_000, 'the Sentinel knows the replica')

  await sentinel.command('SENTINEL', 'FAILOVER', 'mymaster')
  await until(async () => (await onReplica.call('ROLE') as string[])[0] === 'master', 15_000, 'the replica promoted')
  await until(async () => {
    try {
      await connection.client.set('after', '1')
      return await onReplica.get('test:after') === '1'
    } catch {
      return false
    }
  }, 15_000, 'writes reach the new master')
  t.equal(connection.health(), 'up')
  t.notMatch(JSON.stringify(logs), /sentinel-pw-31c9/, 'the Sentinel password is never logged')
})

test('the new master a Sentinel announces: +promoted-slave, +switch-master', async (t) => {
  const name = 'mymaster'
  t.same(announcedMaster('+switch-master', 'mymaster 10.0.0.1 6379 10.0.0.2 6380', name),
    { host: '10.0.0.2', port: 6380 })
  const promoted = 'slave 10.0.0.2:6380 10.0.0.2 6380 @ mymaster 10.0.0.1 6379'
  t.same(announcedMaster('+promoted-slave', promoted, name), { host: '10.0.0.2', port: 6380 })
  const elsewhere = promoted.replace('mymaster', 'other')
  t.equal(announcedMaster('+promoted-slave', elsewhere, name), undefined)
  t.equal(announcedMaster('+switch-master', 'other 10.0.0.1 6379 10.0.0.2 6380', name), undefined)
  t.equal(announcedMaster('+sdown', 'master mymaster 10.0.0.1 6379', name), undefined)
})

test('with Sentinels, the connection moves at the promotion, before the switch ends', async (t) => {
  // Replicas resynchronise after Redis's default diskless delay (5 s): the switch ends that late.
  const set = await startFailoverSet(t)
  const logs: LogLines = []
  const connection = await set.connect({ logs })
  await until(() => connection.replicas() === 2, 10_000, 'both replicas counted')
  const order: string[] = []
  const announcements = new Redis({ port: set.sentinel.port })
  t.teardown(() => announcements.disconnect())
  announcements.on('message', (channel: string) => order.push(channel))
  await announcements.subscribe('+promoted-slave', '+switch-master')

  await set.sentinel.command('SENTINEL', 'FAILOVER', 'mymaster')
  await until(async () => await set.named() !== set.master, 15_000, 'a replica promoted')
  const promoted = new Redis((await set.named()).url)
  t.teardown(() => promoted.disconnect())
  await until(async () => {
    const written = await connection.client.set('after', '1').then(() => true, () => false)
    return written && await promoted.get('test:after') === '1'
  }, 15_000, 'writes reach the new master')
  order.push('written')
  await until(() => order.includes('+switch-master'), 20_000, 'the switch announced')
  t.same(order, ['+promoted-slave', 'written', '+switch-master'], 'moved before the end')
  const moves = logs.filter(line => line.msg === 'redis: the Sentinels announced a new master')
  t.equal(moves.length, 2, 'both announcements logged')
  t.equal(connection.health(), 'up')
})

test('close() ends both connections, and stops reconnecting when Redis is down', async (t) => {
  const server = await startRedisServer(t)
  const connection = await connect(t, server)
  const reader = connection.reader(100)
  await until(() => reader.status === 'ready', 2000, 'reader ready')
  await connection.close()
  t.equal(connection.client.status, 'end')
  t.equal(reader.status, 'end')
  t.equal(connection.health(), 'down')

  const other = await connect(t, server)
  await server.stop()
  await until(() => other.health() === 'down', 2000, 'down')
  const started = performance.now()
  await other.close()
  // A close that waited for the socket would take the command timeout.
  t.ok(performance.now() - started < AT_ONCE_MS, 'closing while reconnecting does not wait')
  await server.start()
  t.equal(await other.whenUp(300), false, 'and it stays closed')
})

test('an error after the first on a socket ioredis gave up does not escape (ioredis listens once)', async (t) => {
  const server = await startRedisServer(t)
  const connection = await connect(t, server)
  const stream = connection.client.stream
  t.doesNotThrow(() => {
    stream.emit('error', new Error('first'))
    stream.emit('error', new Error('second, e.g. a TLS alert after a refused certificate'))
  })
  t.equal(await connection.whenUp(3000), true, 'the connection recovers')
})
