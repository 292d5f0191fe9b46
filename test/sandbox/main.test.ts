import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import t from 'tap'
import { buildApp } from '../../src/app.ts'
import { resolveConfig } from '../../src/config/resolve.ts'
import { SANDBOX_FIXTURES as F, magicValue } from '../../src/sandbox/index.ts'
import { requestLogLine } from '../../src/sandbox/request-log.ts'
import { writeClientsFile } from '../helpers/helper.ts'
import { PROFILE_FILES } from '../helpers/hub-profiles.ts'
import { AUTH, LOOKUP } from './helpers.ts'

/** The children's V8 coverage joins the suite's (c8). */
const COVERAGE: Record<string, string> =
  process.env.NODE_V8_COVERAGE === undefined
    ? {}
    : { NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE }

t.test(
  'a request on one line: time, method, path, operation, fault, status, and the delay when there ' +
  'was one',
  async (t) => {
    const at = new Date('2024-03-01T01:15:00.000Z')
    t.equal(
      requestLogLine(
        {
          method: 'GET',
          path: '/V1/HUB/INT/AUTH/noblbc20/1',
          operation: 'noblbc20',
          fault: undefined,
          status: 200,
          delayMs: 0
        },
        at
      ),
      '2024-03-01T01:15:00.000Z GET /V1/HUB/INT/AUTH/noblbc20/1 operation=noblbc20 fault=none ' +
      'status=200'
    )
    t.equal(
      requestLogLine(
        {
          method: 'POST',
          path: '/V3/HUB/DetilBooking/',
          operation: 'DetilBooking',
          fault: 'SLOW',
          status: 200,
          delayMs: 3000
        },
        at
      ),
      '2024-03-01T01:15:00.000Z POST /V3/HUB/DetilBooking/ operation=DetilBooking fault=SLOW ' +
      'status=200 delay=3000ms'
    )
  }
)

interface TestLike { teardown (fn: () => unknown): void }

/** The settings `npm run sandbox` prints for a gateway: every line of them, none other. */
const SETTINGS = [
  'UPSTREAM_HUB_URL', 'UPSTREAM_BASE_URL', 'UPSTREAM_API_KEY', 'UPSTREAM_ACCESS_TOKEN',
  'PLATFORM_ID'
]

/**
 * `npm run sandbox` with these arguments: its first line, the settings lines after it
 * (`count` of them), and the lines that follow, one per request.
 */
async function runSandbox (t: TestLike, args: string[], count: number) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/sandbox/main.ts', ...args], {
    env: { PATH: process.env.PATH ?? '', ...COVERAGE, SANDBOX_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const first = String((await lines.next()).value)
  const printed: string[] = []
  for (let i = 0; i < count; i++) printed.push(String((await lines.next()).value))
  const settings = Object.fromEntries(printed.map(line => {
    const at = line.indexOf('=')
    return [line.slice(0, at), line.slice(at + 1)]
  }))
  return { child, lines, first, printed, settings }
}

t.test('npm run sandbox prints the settings a gateway needs, as .env lines, and a gateway ' +
  'with them alone answers', async (t) => {
  for (const [name, args, profileFile] of [
    ['the documented hub', [], undefined],
    ['a profile', ['--profile', PROFILE_FILES['public-callers']], PROFILE_FILES['public-callers']]
  ] as const) {
    const names = [...SETTINGS, ...(profileFile === undefined ? [] : ['UPSTREAM_PROFILE_FILE'])]
    const { first, printed, settings } = await runSandbox(t, [...args], names.length)
    const url = /listening on (http:\/\/\S+)/.exec(first)?.[1]
    t.ok(url, `${name}: ${first}`)
    t.ok(printed.every(line => /^[A-Z_]+=\S+$/.test(line)),
      `${name}: NAME=value lines: ${printed.join(' | ')}`)
    t.same(Object.keys(settings), names, `${name}: the addresses, the secrets, the platform id`)
    t.match(settings,
      { UPSTREAM_HUB_URL: url, UPSTREAM_BASE_URL: url, UPSTREAM_PROFILE_FILE: profileFile })

    const key = 'cgw_sandbox-settings-test'
    const config = resolveConfig({
      ...settings,
      CLIENTS_FILE: writeClientsFile(t, [{ name: 'reader', key, scopes: ['customs:read'] }])
    })
    const app = await buildApp({ config, sandbox: false }, false)
    t.teardown(() => app.close())
    const res = await app.inject({
      url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`,
      headers: { authorization: `Bearer ${key}` }
    })
    t.equal(res.statusCode, 200, `${name}: ${res.body}`)
    t.ok(res.json().data.length > 0, `${name}: the sandbox's records`)
  }
})

t.test('npm run sandbox logs each request it receives on stdout, one line each', async (t) => {
  const { child, lines, first } = await runSandbox(t, [], SETTINGS.length)
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
  t.match(
    await ask(`${LOOKUP}/noblbc20/${F.taxpayer.npwp}`),
    new RegExp(
      `^${time} GET ${LOOKUP}/noblbc20/${F.taxpayer.npwp} operation=noblbc20 fault=none status=200$`
    ),
    'a lookup'
  )
  t.match(
    await ask(`${LOOKUP}/noblbc20/${magicValue('503', 'npwp')}`),
    new RegExp(
      `^${time} GET ${LOOKUP}/noblbc20/${magicValue('503', 'npwp')} operation=noblbc20 fault=503 ` +
      'status=503$'
    ),
    'a fault on demand'
  )
  t.match(
    await ask(`${LOOKUP}/noblbc23/${magicValue('RESET', 'npwp')}`),
    / operation=noblbc23 fault=RESET status=reset$/,
    'a reset'
  )
  t.match(await ask(`${LOOKUP}/noblbc20/${magicValue('401', 'npwp')}`), / fault=401 status=401$/)
  t.match(
    await ask('/nowhere'),
    new RegExp(`^${time} GET /nowhere operation=unknown fault=none status=404$`),
    'an unknown address'
  )
  child.kill('SIGTERM')
  t.equal((await lines.next()).done, true, 'no other line')
})
