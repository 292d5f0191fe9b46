import { test } from 'tap'
import { SANDBOX_FIXTURES } from '../../src/sandbox/index.ts'
import { byteBudget } from '../../src/upstream/body-budget.ts'
import { build } from '../helpers/helper.ts'

const never = new AbortController().signal
const tick = () => new Promise(resolve => setImmediate(resolve))

test('bytes are granted in arrival order, within the limit', async (t) => {
  const budget = byteBudget(100)
  const granted: string[] = []
  const first = await budget.acquire(60, never)
  const second = budget.acquire(60, never).then((release) => {
    granted.push('second')
    return release
  })
  // It would fit, but it came after a waiter: first come, first served.
  const third = budget.acquire(10, never).then((release) => {
    granted.push('third')
    return release
  })
  await tick()
  t.same(granted, [], 'both wait while 60 of 100 are taken')
  t.equal(budget.used, 60)
  t.equal(budget.waiting, 70)
  first()
  first()
  const releases = await Promise.all([second, third])
  t.same(granted, ['second', 'third'])
  t.equal(budget.used, 70, 'releasing twice gives back once')
  t.equal(budget.waiting, 0)
  for (const release of releases) release()
  t.equal(budget.used, 0)
})

test('a body larger than the whole budget waits until nothing else holds any', async (t) => {
  const budget = byteBudget(100)
  const small = await budget.acquire(10, never)
  let big: (() => void) | undefined
  const waiting = budget.acquire(250, never).then((release) => { big = release })
  await tick()
  t.equal(big, undefined)
  small()
  await waiting
  t.equal(budget.used, 250)
  let after = false
  const next = budget.acquire(1, never).then((release) => { after = true; return release })
  await tick()
  t.notOk(after, 'nothing fits beside it')
  big!()
  ;(await next)()
  t.ok(after)
  t.equal(budget.used, 0)
})

test('a waiter whose deadline passes leaves the queue with UPSTREAM_TIMEOUT', async (t) => {
  const budget = byteBudget(100)
  const held = await budget.acquire(90, never)
  const deadline = new AbortController()
  const late = budget.acquire(50, deadline.signal)
  let smallGranted = false
  const small = budget.acquire(5, never).then((release) => { smallGranted = true; return release })
  await tick()
  t.notOk(smallGranted, 'behind the waiter')
  deadline.abort()
  await t.rejects(late, { code: 'UPSTREAM_TIMEOUT' })
  ;(await small)()
  t.ok(smallGranted, 'the next waiter is let in once the aborted one is gone')
  t.equal(budget.waiting, 0)
  held()
  t.equal(budget.used, 0)
  await t.rejects(
    budget.acquire(1, AbortSignal.abort()),
    { code: 'UPSTREAM_TIMEOUT' },
    'already past its deadline'
  )
})

test('through the gateway: large answers under a budget smaller than one of them all ' +
  'arrive', async (t) => {
  const tokens = ['hub-token-1', 'hub-token-2', 'hub-token-3', 'hub-token-4']
  const { app, sandbox } = await build(t, {
    env: {
      UPSTREAM_BODY_BUDGET_BYTES: String(300 * 1024),
      CACHE_TTL_SECONDS: '0',
      UPSTREAM_CREDENTIALS: 'forward'
    },
    sandbox: { acceptedTokens: tokens }
  })
  const { npwp, blNo, blDate, documents } = SANDBOX_FIXTURES.benchmark.fiveHundred
  const url = `/v1/sp2/documents?npwp=${npwp}&blNo=${blNo}&blDate=${blDate}`
  // Four callers with their own hub tokens: four hub calls, none joined to another (identical
  // lookups would share one).
  const answers = await Promise.all(
    tokens.map((token) => app.inject({ url, headers: { 'x-upstream-authorization': token } }))
  )
  t.same(
    answers.map((res) => res.statusCode),
    [200, 200, 200, 200]
  )
  t.same(
    answers.map((res) => res.json<{ meta: { count: number } }>().meta.count),
    [documents, documents, documents, documents]
  )
  t.equal(sandbox.count('document_sp2/host-to-host'), 4, 'four hub calls')
})
