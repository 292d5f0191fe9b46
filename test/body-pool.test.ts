import { test } from 'tap'
import { bodyPool, sizeClassOf } from '../src/upstream/body-pool.ts'

test('sizes are rounded up to a power of two from 64 KiB', async (t) => {
  t.equal(sizeClassOf(1), 64 * 1024)
  t.equal(sizeClassOf(64 * 1024), 64 * 1024)
  t.equal(sizeClassOf(64 * 1024 + 1), 128 * 1024)
  t.equal(sizeClassOf(1_373_580), 2 * 1024 * 1024)
})

test('a buffer given back is taken again for a body of its size class, within the bound', async (t) => {
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
