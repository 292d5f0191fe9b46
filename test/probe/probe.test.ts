import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'tap'
import type { Test } from 'tap'
import { operationsOf } from '../../src/catalogue/operations.ts'
import { runProbe } from '../../src/probe/run.ts'
import type { HubProfile } from '../../src/profile/schema.ts'
import { SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_FIXTURES as F, sandboxEnv, startSandbox, type Sandbox } from '../../src/sandbox/index.ts'
import { build } from '../helper.ts'
import { PROFILE_FILES, type ProfileJson, type ProfileName } from '../hub-profiles.ts'
import { routeUrl, type Hub } from '../hubs.ts'

// npm run probe-hub against the sandbox over HTTP, in the default form and
// in each profile (test/hub-profiles.ts): it fits the profile it is
// configured with, sees the drift of one it is not, finds the variant with
// --discover, and the profile it proposes serves every lookup route.

/** The operator's values: a taxpayer with BLs, declarations and SP2 documents. */
const VALUES = ['--npwp', F.declaration.npwp, '--bl-no', F.declaration.blNo, '--bl-date', F.declaration.blDate, '--pib-no', F.declaration.pibNo, '--container-no', F.sp2.containerNo, '--pause-ms', '0']
/** What --discover is told beyond its own list: the other hub's prefixes (docs/hub.md). */
const OTHER_PREFIXES = ['--try-prefix', '/NLE-DEV/ceisa/v2', '--try-prefix', '/api/nlesp2/v2']
const WRITES = new Set<string>(operationsOf('write').map(op => op.id))

async function sandboxIn (t: Test, profile: ProfileName | undefined): Promise<Sandbox> {
  const sandbox = await startSandbox(profile === undefined ? {} : { profile: PROFILE_FILES[profile] })
  t.teardown(() => sandbox.close())
  return sandbox
}

/** The probe never writes: every request the sandbox received was a GET, none to a write's address. */
function onlyReads (t: Test, sandbox: Sandbox, bound: number): void {
  const methods = new Set(sandbox.requests.map(r => r.method))
  t.same([...methods], ['GET'], 'GET requests only')
  t.same(sandbox.requests.filter(r => WRITES.has(r.operation)), [], 'none to an offer, a booked call or a finalization')
  t.ok(sandbox.count() <= bound, `at most the bound of calls (${sandbox.count()} <= ${bound})`)
}

interface JsonReport {
  drift: boolean
  calls: number
  operations: Array<{ operation: string, reached: boolean, skipped?: string, discovered: boolean, differences: Array<{ setting: string }> }>
  profile: ProfileJson
}

test('against the default sandbox, as configured by default: every lookup fits, exit 0', async (t) => {
  const sandbox = await sandboxIn(t, undefined)
  const out = await runProbe(VALUES, sandboxEnv(sandbox.url))
  t.equal(out.code, 0, out.stdout + out.stderr)
  t.match(out.stdout, /The hub answers as the profile in force says/)
  t.match(out.stdout, /noblbc20 +yes +200/)
  t.notMatch(out.stdout, new RegExp(`${SANDBOX_API_KEY}|${SANDBOX_ACCESS_TOKEN}`), 'no credential printed')
  onlyReads(t, sandbox, 200)
  t.equal(sandbox.count(), 1 + operationsOf('bl-list').length + operationsOf('container-list').length + operationsOf('lookup').length, 'one baseline call and one per lookup')
})

for (const name of ['documented', 'public-callers', 'other-hub'] as const) {
  test(`against the sandbox playing ${name}, configured with the same profile: exit 0`, async (t) => {
    const sandbox = await sandboxIn(t, name)
    const out = await runProbe([...VALUES, '--json'], { ...sandboxEnv(sandbox.url), UPSTREAM_PROFILE_FILE: PROFILE_FILES[name] })
    const report = JSON.parse(out.stdout) as JsonReport
    t.equal(out.code, 0, JSON.stringify(report.operations.filter(o => o.differences.length > 0 || !o.reached)))
    t.equal(report.drift, false)
    t.ok(report.operations.every(o => o.reached && !o.discovered), 'every lookup reached as configured')
    onlyReads(t, sandbox, 200)
  })
}

test('a hub that fits: the proposal keeps the timeouts and cache lifetimes', async (t) => {
  const sandbox = await sandboxIn(t, undefined)
  const dir = mkdtempSync(join(tmpdir(), 'probe-timeouts-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'slow-hub.json')
  writeFileSync(file, JSON.stringify({
    name: 'slow-hub',
    defaults: { timeouts: { headersMs: 4000 } },
    // A write's own: the probe never calls it, so the proposal keeps what the profile says.
    operations: { DetilBooking: { timeouts: { bodyMs: 2500 } }, noblbc20: { cacheTtlSeconds: 0 } }
  }))
  const env = { ...sandboxEnv(sandbox.url), UPSTREAM_PROFILE_FILE: file }
  const out = await runProbe([...VALUES, '--json'], env)
  t.equal(out.code, 0, out.stdout.slice(0, 2000) + out.stderr)
  const { profile } = JSON.parse(out.stdout) as { profile: HubProfile }
  t.same(profile.defaults?.timeouts, { headersMs: 4000, bodyMs: 10000 }, 'the defaults\'')
  t.same(profile.operations?.DetilBooking?.timeouts, { headersMs: 4000, bodyMs: 2500 },
    'a write\'s own')
  t.equal(profile.operations?.noblbc20?.cacheTtlSeconds, 0, 'a lookup\'s cache lifetime')
})

test('against the other hub, configured by default, without --discover: drift, exit 1, nothing reached', async (t) => {
  const sandbox = await sandboxIn(t, 'other-hub')
  const out = await runProbe(VALUES, sandboxEnv(sandbox.url))
  t.equal(out.code, 1, out.stderr)
  t.match(out.stdout, /noblbc20 +no +404/)
  t.match(out.stdout, /not reached \(status 404\); --discover tries the known variants/)
  onlyReads(t, sandbox, 200)

  sandbox.reset()
  const found = await runProbe([...VALUES, '--discover', '--max-calls', '40', ...OTHER_PREFIXES], sandboxEnv(sandbox.url))
  t.equal(found.code, 1)
  t.match(found.stdout, /noblbc16 +found +200/, 'found within 40 calls')
  // What the lookups found share is said once, by the member of the profile that says it.
  const lookupPrefix = /prefixes\.lookup: \/V1\/HUB\/INT\/AUTH -> \/NLE-DEV\/ceisa\/v2 \(\d+ op/
  t.match(found.stdout, lookupPrefix)
  t.match(found.stdout, /defaults\.tokenHeader: Authorization -> Authentication/)
  t.match(found.stdout, /operations\.noblbc16\.path: noblbc16\/ -> noblbc16\/\{npwp\}/)
  // `result` was only ever "ok" beside the data: no failure rule without a failure seen.
  t.notMatch(found.stdout, /failure:/)
  t.match(found.stdout, /\n! "result" beside the data was only ever "ok".*no failure rule proposed/)
  onlyReads(t, sandbox, 40)
})

test('without a BL, the container lists take the first BL a BL list answers; the token may come from its file', async (t) => {
  const sandbox = await sandboxIn(t, undefined)
  const dir = mkdtempSync(join(tmpdir(), 'probe-token-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const tokenFile = join(dir, 'token')
  writeFileSync(tokenFile, SANDBOX_ACCESS_TOKEN)
  const { UPSTREAM_ACCESS_TOKEN: _token, ...env } = sandboxEnv(sandbox.url)
  const out = await runProbe(['--npwp', F.taxpayer.npwp, '--pause-ms', '0', '--json'], { ...env, UPSTREAM_ACCESS_TOKEN_FILE: tokenFile })
  const report = JSON.parse(out.stdout) as JsonReport
  t.equal(out.code, 0)
  const skipped = Object.fromEntries(report.operations.filter(o => o.skipped !== undefined).map(o => [o.operation, o.skipped]))
  t.same(skipped, { BC20ByNoPib: 'needs --pib-no', 'document_sp2_container/cargo_owner': 'needs --container-no' })
  const first = F.taxpayer.bc16[0]!
  t.ok(sandbox.requests.some(r => r.operation === 'kontainerbc23' && r.values.blNo === first.blNo), `the BL of the BC 1.6 list (${first.blNo})`)
})

/** Every lookup route of the gateway with values that have data, under the profile's parameters. */
function lookupValues (id: string): Record<string, string> {
  const iso = (compact: string) => `${compact.slice(0, 4)}-${compact.slice(4, 6)}-${compact.slice(6)}`
  const containers = (F.containers as Record<string, { noBl: string, tglBl: string } | undefined>)[id]
  if (containers !== undefined) return { blNo: containers.noBl, blDate: iso(containers.tglBl) }
  if (id.startsWith('noblbc')) return { npwp: F.taxpayer.npwp }
  if (id === 'BC20ByNoPib' || id === 'BC20ByNoBL') return { npwp: F.declaration.npwp, pibNo: F.declaration.pibNo, blNo: F.declaration.blNo, blDate: F.declaration.blDate }
  return { npwp: F.sp2.npwp, blNo: F.sp2.blNo, blDate: F.sp2.blDate, containerNo: F.sp2.containerNo }
}

for (const name of ['public-callers', 'other-hub'] as const) {
  test(`the profile --discover proposes for the ${name} hub, from the default, serves every lookup route`, async (t) => {
    const sandbox = await sandboxIn(t, name)
    const out = await runProbe([...VALUES, '--discover', '--json', ...(name === 'other-hub' ? OTHER_PREFIXES : [])], sandboxEnv(sandbox.url))
    t.equal(out.code, 1, `drift from the default ${out.stderr}`)
    const report = JSON.parse(out.stdout) as JsonReport
    t.ok(report.operations.every(o => o.reached), `every lookup found: ${report.operations.filter(o => !o.reached).map(o => o.operation).join(', ')}`)
    t.ok(report.operations.some(o => o.discovered && o.differences.some(d => d.setting.endsWith('.prefix'))), 'the settings that explain the differences are named')
    onlyReads(t, sandbox, 200)

    const dir = mkdtempSync(join(tmpdir(), 'probe-profile-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const file = join(dir, 'proposed.json')
    writeFileSync(file, JSON.stringify(report.profile, null, 2))

    const { app } = await build(t, { sandbox: { profile: PROFILE_FILES[name] }, env: { UPSTREAM_PROFILE_FILE: file } })
    const hub: Hub = { name, file, profile: report.profile }
    for (const op of [...operationsOf('bl-list'), ...operationsOf('container-list'), ...operationsOf('lookup')]) {
      const res = await app.inject({ url: routeUrl(hub, op.id, lookupValues(op.id)) })
      t.equal(res.statusCode, 200, `${op.id}: ${res.body.slice(0, 300)}`)
      const data: unknown = res.json().data
      t.ok(Array.isArray(data) ? data.length > 0 : typeof data === 'object' && data !== null, `${op.id} answers data`)
    }
  })
}

test('the call bound and the pause between calls hold, --discover included', async (t) => {
  const sandbox = await sandboxIn(t, 'other-hub')
  const started = performance.now()
  const out = await runProbe([...VALUES.slice(0, -2), '--discover', '--max-calls', '6', '--pause-ms', '40'], sandboxEnv(sandbox.url))
  const elapsed = performance.now() - started
  t.equal(out.code, 1)
  t.equal(sandbox.count(), 6, 'six calls, then no more')
  t.ok(elapsed >= 5 * 40, `five pauses between six calls (${Math.round(elapsed)} ms)`)
  t.match(out.stdout, /noblbc20: the call bound was reached/)
  t.match(out.stdout, /noblbc16: not reached \(status 404\); no variant tried answered/)
  onlyReads(t, sandbox, 6)
})

test('exit 2 when it cannot run: bad arguments, no hub, an unreachable hub, no token', async (t) => {
  const usage = await runProbe(['--bl-date', '17-02-2024', '--max-calls', 'x', '--try-prefix', 'no-slash', '--container-no', 'ABCD1234567'], {})
  t.equal(usage.code, 2)
  const flags = ['--npwp: is required', '--bl-date', '--max-calls', '--try-prefix', '--container']
  for (const flag of [...flags, 'usage: npm run -s probe-hub']) t.match(usage.stderr, flag)
  t.equal((await runProbe(['--npwp', '1', '--unknown'], {})).code, 2, 'an unknown flag')
  const more = await runProbe([
    '--npwp', F.taxpayer.npwp, '--hub-url', 'ftp://x', '--pib-no', '12', '--bl-no', 'a b',
    '--try-token-header', 'a b', '--try-key-header', 'a:b'
  ], {})
  const named = ['--hub-url', '--pib-no', '--bl-no', '--try-token-header', '--try-key-header: must']
  for (const flag of named) t.match(more.stderr, flag)
  t.match((await runProbe(['--npwp', '123'], {})).stderr, /--npwp: must be 15 or 16 digits/)

  const noHub = await runProbe(['--npwp', F.taxpayer.npwp], {})
  t.equal(noHub.code, 2)
  t.match(noHub.stderr, /config error: UPSTREAM_HUB_URL/)

  const sandbox = await startSandbox()
  const url = sandbox.url
  await sandbox.close()
  const down = await runProbe(['--npwp', F.taxpayer.npwp, '--hub-url', url, '--pause-ms', '0'], { UPSTREAM_API_KEY: 'k', UPSTREAM_ACCESS_TOKEN: 't', PLATFORM_ID: 'P' })
  t.equal(down.code, 2, down.stdout)
  t.match(down.stderr, /the hub did not answer at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/)

  const noToken = await runProbe(['--npwp', F.taxpayer.npwp, '--hub-url', url], { UPSTREAM_API_KEY: 'k', PLATFORM_ID: 'P', UPSTREAM_CREDENTIALS: 'forward' })
  t.equal(noToken.code, 2)
  t.match(noToken.stderr, /no access token/)
})

test('npm run probe-hub as a process: the settings from the environment, the exit code, no secret printed', async (t) => {
  const sandbox = await sandboxIn(t, undefined)
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/probe/main.ts', ...VALUES, '--json'], {
    env: { PATH: process.env.PATH ?? '', ...coverage(), ...sandboxEnv(sandbox.url) },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  const code = await new Promise<number | null>(resolve => child.on('close', resolve))
  t.equal(code, 0, 'exit 0: the default hub fits the default profile')
  const report = JSON.parse(stdout) as JsonReport
  t.equal(report.operations.length, 17)
  t.notMatch(stdout, new RegExp(`${SANDBOX_API_KEY}|${SANDBOX_ACCESS_TOKEN}`), 'no credential printed')
})

function coverage (): Record<string, string> {
  const dir = process.env.NODE_V8_COVERAGE
  return dir === undefined ? {} : { NODE_V8_COVERAGE: dir }
}
