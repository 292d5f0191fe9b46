import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import t from 'tap'
import { SANDBOX_FIXTURES as F, magicValue } from '../../src/sandbox/index.ts'
import { requestLogLine } from '../../src/sandbox/request-log.ts'
import { AUTH, LOOKUP } from './helpers.ts'

/** The children's V8 coverage joins the suite's (c8). */
const COVERAGE: Record<string, string> = process.env.NODE_V8_COVERAGE === undefined ? {} : { NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE }

t.test('a request on one line: time, method, path, operation, fault, status, and the delay when there was one', async (t) => {
  const at = new Date('2024-03-01T01:15:00.000Z')
  t.equal(requestLogLine({ method: 'GET', path: '/V1/HUB/INT/AUTH/noblbc20/1', operation: 'noblbc20', fault: undefined, status: 200, delayMs: 0 }, at),
    '2024-03-01T01:15:00.000Z GET /V1/HUB/INT/AUTH/noblbc20/1 operation=noblbc20 fault=none status=200')
  t.equal(requestLogLine({ method: 'POST', path: '/V3/HUB/DetilBooking/', operation: 'DetilBooking', fault: 'SLOW', status: 200, delayMs: 3000 }, at),
    '2024-03-01T01:15:00.000Z POST /V3/HUB/DetilBooking/ operation=DetilBooking fault=SLOW status=200 delay=3000ms')
})

t.test('npm run sandbox logs each request it receives on stdout, one line each', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/sandbox/main.ts'], {
    env: { PATH: process.env.PATH ?? '', ...COVERAGE, SANDBOX_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const first = String((await lines.next()).value)
  const url = /listening on (http:\/\/[^ ]+)/.exec(first)?.[1]
  t.ok(url, first)

  const ask = async (path: string) => {
    try {
      const res = await fetch(`${url}${path}`, { headers: AUTH })
      await res.arrayBuffer()
    } catch {
      // The RESET fault: no answer.
    }
    return String((await lines.next()).value)
  }
  const time = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z'
  t.match(await ask(`${LOOKUP}/noblbc20/${F.taxpayer.npwp}`), new RegExp(`^${time} GET ${LOOKUP}/noblbc20/${F.taxpayer.npwp} operation=noblbc20 fault=none status=200$`), 'a lookup')
  t.match(await ask(`${LOOKUP}/noblbc20/${magicValue('503', 'npwp')}`), new RegExp(`^${time} GET ${LOOKUP}/noblbc20/${magicValue('503', 'npwp')} operation=noblbc20 fault=503 status=503$`), 'a fault on demand')
  t.match(await ask(`${LOOKUP}/noblbc23/${magicValue('RESET', 'npwp')}`), / operation=noblbc23 fault=RESET status=reset$/, 'a reset')
  t.match(await ask(`${LOOKUP}/noblbc20/${magicValue('401', 'npwp')}`), / fault=401 status=401$/)
  t.match(await ask('/nowhere'), new RegExp(`^${time} GET /nowhere operation=unknown fault=none status=404$`), 'an unknown address')
  child.kill('SIGTERM')
  t.equal((await lines.next()).done, true, 'no other line')
})
