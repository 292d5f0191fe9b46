import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout } from 'node:timers/promises'
import { test } from 'tap'
import { resolveConfig } from '../../src/config/resolve.ts'
import { sandboxEnv } from '../../src/sandbox/index.ts'
import { bodyPool, sizeClassOf, type BodyPool } from '../../src/upstream/body-pool.ts'
import { startDeadline } from '../../src/upstream/deadline.ts'
import { resolveOperations } from '../../src/upstream/resolve-operations.ts'
import { createTransport } from '../../src/upstream/transport.ts'
import { resolveProfile } from '../../src/profile/resolve.ts'

test('sizes are rounded up to a power of two from 64 KiB', async (t) => {
  t.equal(sizeClassOf(1), 64 * 1024)
  t.equal(sizeClassOf(64 * 1024), 64 * 1024)
  t.equal(sizeClassOf(64 * 1024 + 1), 128 * 1024)
  t.equal(sizeClassOf(1_373_580), 2 * 1024 * 1024)
})

test('a buffer given back is taken again for a body of its size class, within the ' +
  'bound', async (t) => {
  const pool = bodyPool(256 * 1024)
  const first = pool.take(55_000)
  t.equal(first.length, 64 * 1024)
  pool.give(first)
  t.equal(pool.spare, 64 * 1024)
  t.equal(pool.take(60_000), first, 'the same buffer again')
  t.equal(pool.spare, 0)
  t.not(pool.take(60_000), first, 'a new one while the first is out')

  const big = pool.take(200_000)
  const bigger = pool.take(200_000)
  pool.give(big)
  pool.give(bigger)
  t.equal(pool.spare, 256 * 1024, 'the second one is past the bound and left to the collector')
  t.equal(pool.take(200_000), big)
  t.not(pool.take(200_000), bigger)

  pool.give(Buffer.alloc(1000))
  t.equal(pool.spare, 0, 'a buffer not of a size class is not kept')
})

test('no spare buffers without a budget', async (t) => {
  const pool = bodyPool(0)
  pool.give(pool.take(1))
  t.equal(pool.spare, 0)
})

test('through the transport: a body waiting for room in the body budget holds no buffer until it ' +
  'may be read', async (t) => {
  const body = Buffer.alloc(200 * 1024, 'x')
  const hub = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length })
    response.end(body)
  })
  await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve))
  t.teardown(() => {
    hub.close()
  })
  const url = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`
  // Room for one 200 KiB body at a time.
  const config = resolveConfig({
    ...sandboxEnv(url),
    UPSTREAM_BODY_BUDGET_BYTES: String(300 * 1024)
  })
  const pool = bodyPool(0)
  let held = 0
  let most = 0
  const counted: BodyPool = {
    get spare () {
      return pool.spare
    },
    take (size) {
      const buffer = pool.take(size)
      held += buffer.length
      most = Math.max(most, held)
      return buffer
    },
    give (buffer) {
      held -= buffer.length
      pool.give(buffer)
    }
  }
  const transport = createTransport({
    config,
    profile: resolveProfile(config),
    userAgent: 'test',
    budgetFromBytes: 64 * 1024,
    buffers: counted
  })
  t.teardown(async () => {
    await transport.close()
  })
  const op = resolveOperations(config).get('noblbc20')!
  const sizes = await Promise.all(
    [1, 2, 3, 4].map(
      async (n) =>
        await transport.exchange(
          op,
          {
            path: `/bodies/${n}`,
            requestId: String(n),
            authorization: '',
            deadline: startDeadline(10_000)
          },
          async (_chunks, size) => {
            // The answer is decoded while the others wait for room.
            await setTimeout(30)
            return size
          }
        )
    )
  )
  t.same(sizes, [body.length, body.length, body.length, body.length], 'every body read whole')
  t.equal(held, 0, 'every buffer given back')
  t.equal(
    most,
    sizeClassOf(body.length),
    "one body's buffer held at a time: those waiting for room held none"
  )
})
