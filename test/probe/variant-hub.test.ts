import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'tap'
import type { Test } from 'tap'
import { operationsOf } from '../../src/catalogue/operations.ts'
import { runProbe, type ProbeOutcome } from '../../src/probe/run.ts'
import {
  magicValue, SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_FIXTURES as F, SANDBOX_PASSWORD,
  SANDBOX_USERNAME, sandboxEnv, startSandbox, type Sandbox, type SandboxOptions
} from '../../src/sandbox/index.ts'
import { build } from '../helpers/helper.ts'
import { PROFILE_FILES, type ProfileJson } from '../helpers/hub-profiles.ts'
import { HUBS, routeUrl, type Hub } from '../helpers/hubs.ts'

// The probe against a hub variant nobody here wrote (test/fixtures/profiles/
// variant-hub.json: its own prefixes, key headers per operation, path
// orders, an envelope login with refresh tokens of two seconds, errors in
// two shapes, values as strings), as an operator meets it on day one.

const VARIANT = fileURLToPath(new URL('../fixtures/profiles/variant-hub.json', import.meta.url))
const variant = JSON.parse(readFileSync(VARIANT, 'utf8')) as ProfileJson & Record<string, unknown>
const VALUES = [
  '--npwp', F.declaration.npwp, '--bl-no', F.declaration.blNo, '--bl-date', F.declaration.blDate,
  '--pib-no', F.declaration.pibNo, '--container-no', F.sp2.containerNo
]
/** What the hub's documentation would tell the operator: its prefixes and its SP2 key header. */
const FROM_ITS_DOCS = [
  '--try-prefix', '/gw/ceisa/v3', '--try-prefix', '/gw/sp2/v3', '--try-key-header', 'x-nle-key'
]
const LOOKUPS = [
  ...operationsOf('bl-list'), ...operationsOf('container-list'), ...operationsOf('lookup')
]

interface Difference {
  setting: string
  configured: unknown
  proposed: unknown
  operations?: string[]
}
interface JsonReport {
  drift: boolean
  calls: number
  maxCalls: number
  login?: { logins: number, renewals: number }
  hints: string[]
  operations: Array<{ operation: string, reached: boolean, differences: Difference[] }>
  differences: Difference[]
  members: { observed: string[], onTrust: string[] }
  profile: ProfileJson
}

function tempDir (t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'probe-variant-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

async function playing (t: Test, profile: string | object, options: SandboxOptions = {})
  : Promise<Sandbox> {
  const sandbox = await startSandbox({ ...options, profile })
  t.teardown(() => sandbox.close())
  return sandbox
}

/** The verdict and the report agree: exit 1 exactly when a difference is listed. */
function agrees (t: Test, out: ProbeOutcome, report: JsonReport): void {
  t.equal(report.drift, report.differences.length > 0, 'drift exactly when a difference is listed')
  t.equal(out.code, report.differences.length > 0 ? 1 : 0, `exit code ${out.code}: ${out.stderr}`)
  const listed = new Set(report.differences.flatMap(d => d.operations ?? []))
  for (const o of report.operations) {
    if (o.differences.length === 0) continue
    t.ok(listed.has(o.operation), `${o.operation}'s differences are listed`)
  }
}

function json (t: Test, out: ProbeOutcome): JsonReport {
  const report = JSON.parse(out.stdout) as JsonReport
  agrees(t, out, report)
  return report
}

test('without --try-prefix: the prefixes named the problem first, with the option', async (t) => {
  const sandbox = await playing(t, VARIANT)
  const env = sandboxEnv(sandbox.url)
  const out = await runProbe([...VALUES, '--discover', '--pause-ms', '0'], env)
  t.equal(out.code, 1, out.stderr)
  const lines = out.stdout.split('\n')
  const lookups = /^! The prefixes are the problem: no lookup answered at any address tried/
  t.match(lines[1], lookups, 'right after the heading')
  t.match(lines[1], /--try-prefix \/its\/prefix/)
  t.match(lines[2], /^! The prefixes are the problem: no SP2 operation answered/)
  const asJson = await runProbe([...VALUES, '--discover', '--pause-ms', '0', '--json'], env)
  const report = json(t, asJson)
  t.ok(report.calls < report.maxCalls, `bound not spent where no prefix answers (${report.calls})`)
  t.ok(report.operations.every(o => !o.reached))
  const notReached = report.differences.filter(d => d.proposed === null)
  t.equal(notReached.length, LOOKUPS.length, 'each lookup not reached is a difference')
})

test('login mode, --try-prefix, --try-key-header: found, renewed, grouped', async (t) => {
  const sandbox = await playing(t, VARIANT, { loginTokenTtlMs: 2000 })
  const dir = tempDir(t)
  // What the operator writes from the hub's documentation before the probe: its login only.
  const start = join(dir, 'first-day.json')
  writeFileSync(start, JSON.stringify({ name: 'first-day', login: variant.login }))
  writeFileSync(join(dir, 'user'), `${SANDBOX_USERNAME}\n`)
  writeFileSync(join(dir, 'password'), `${SANDBOX_PASSWORD}\n`)
  // The sandbox's settings without a token, a login address or an account in clear.
  const env = Object.fromEntries(Object.entries(sandboxEnv(sandbox.url))
    .filter(([name]) => name !== 'UPSTREAM_ACCESS_TOKEN' && !name.startsWith('UPSTREAM_LOGIN_')))
  const args = [...VALUES, '--discover', ...FROM_ITS_DOCS, '--pause-ms', '25', '--json']
  const out = await runProbe(args, {
    ...env,
    UPSTREAM_CREDENTIALS: 'login',
    UPSTREAM_LOGIN_USERNAME_FILE: join(dir, 'user'),
    UPSTREAM_LOGIN_PASSWORD_FILE: join(dir, 'password'),
    UPSTREAM_PROFILE_FILE: start
  })
  const report = json(t, out)
  t.equal(out.code, 1)
  t.same(report.operations.filter(o => !o.reached).map(o => o.operation), [], 'every lookup found')
  const secrets = new RegExp(`${SANDBOX_PASSWORD}|${SANDBOX_API_KEY}|${SANDBOX_ACCESS_TOKEN}`)
  t.notMatch(out.stdout, secrets, 'no secret printed')
  // At least 80 calls 25 ms apart outlive a token of 2 s, renewed at half its lifetime.
  t.ok(report.calls >= 80, `${report.calls} calls`)
  const { logins = 0, renewals = 0 } = report.login ?? {}
  t.ok(logins >= 1, 'logged in with the profile\'s login and the account\'s files')
  t.ok(renewals >= 1, `renewed by its refresh token (${renewals})`)
  const reads = sandbox.requests.filter(r => r.operation !== 'login' && r.operation !== 'refresh')
  const methods = new Set(reads.map(r => r.method))
  t.same([...methods], ['GET'], 'only reads, besides the login')

  const { profile } = report
  const shared = { lookup: '/gw/ceisa/v3', sp2: '/gw/sp2/v3', booking: '/HUB-DEV' }
  t.same(profile.prefixes, shared, 'the prefixes each area shares')
  const own = profile.operations?.['document_sp2/host-to-host']?.apiKeyHeader
  t.equal(own, 'x-nle-key', 'the key header an operation has of its own')
  t.equal(profile.defaults?.apiKeyHeader, 'beacukai-api-key')
  const errors = profile.defaults?.errorFields?.slice(0, 2)
  t.same(errors, ['error', 'errors.0.detail'], 'both error shapes, in defaults')
  const repeated = Object.entries(profile.operations ?? {}).filter(([, e]) =>
    e.errorFields !== undefined || e.tokenHeader !== undefined || e.prefix !== undefined)
  t.same(repeated, [], 'no operation repeats what it shares')
  t.ok(Object.keys(profile.operations ?? {}).length < 20, 'an entry only where one differs')
  t.equal(profile.stringValues, true)
  const observed = [
    'login.path', 'login.refreshPath', 'login.tokenField', 'tokenScheme', 'prefixes.lookup',
    'defaults.errorFields'
  ]
  for (const member of observed) t.ok(report.members.observed.includes(member), `seen: ${member}`)
  const onTrust = [
    'login.expiresField', 'prefixes.booking', 'operations.DetilBooking (a write: never called)'
  ]
  for (const member of onTrust) t.ok(report.members.onTrust.includes(member), `on trust: ${member}`)

  // The gateway on the proposed profile: every lookup route, and the operation's error text from
  // its list of errors.
  const file = join(dir, 'proposed.json')
  writeFileSync(file, JSON.stringify(profile))
  const { app } = await gateway(t, file)
  const hub: Hub = { ...HUBS.documented, file, profile }
  for (const op of LOOKUPS) {
    const res = await app.inject({ url: routeUrl(hub, op.id, lookupValues(op.id)) })
    t.equal(res.statusCode, 200, `${op.id}: ${res.body.slice(0, 300)}`)
  }
  const nowhere = { npwp: F.declaration.npwp, pibNo: '999999' }
  const missing = await app.inject({ url: routeUrl(hub, 'BC20ByNoPib', nowhere) })
  t.equal(missing.statusCode, 404)
  t.equal(missing.json().upstreamMessage, 'Data tidak ditemukan', 'read at errors.0.detail')
})

test('a record\'s own state is not the answer\'s: a rule reading it is dropped', async (t) => {
  const sandbox = await playing(t, VARIANT)
  const dir = tempDir(t)
  // The variant's profile with the status rule of the defaults on the declaration by PIB too: the
  // declaration's `status` (SPPB) is then read as the answer's.
  const { BC20ByNoPib: _own, ...operations } = variant.operations ?? {}
  const configured = join(dir, 'configured.json')
  const byPib = { path: 'BC20ByNoPib/{nopib}/{npwp}' }
  const withRule = { ...variant, operations: { ...operations, BC20ByNoPib: byPib } }
  writeFileSync(configured, JSON.stringify(withRule))
  const env = { ...sandboxEnv(sandbox.url), UPSTREAM_PROFILE_FILE: configured }
  const out = await runProbe([...VALUES, '--pause-ms', '0', '--json'], env)
  const report = json(t, out)
  const rule = report.differences.find(d => d.setting === 'operations.BC20ByNoPib.failure')
  t.ok(rule !== undefined, 'a difference')
  t.same(rule?.proposed, { messageWithoutData: true }, 'the rule without the record\'s state')
  t.notMatch(JSON.stringify(report.profile), /sppb/i, 'SPPB is no word for success')

  const proposed = join(dir, 'proposed.json')
  writeFileSync(proposed, JSON.stringify(report.profile))
  const url = `/v1/customs/bc20/declarations/${F.declaration.pibNo}?npwp=${F.declaration.npwp}`
  const before = await gateway(t, configured)
  t.equal((await before.app.inject({ url })).statusCode, 422, 'a failure with the profile in force')
  const after = await gateway(t, proposed)
  t.equal((await after.app.inject({ url })).statusCode, 200, 'the declaration, proposed profile')
})

test('a failure rule from an envelope member only with both outcomes seen', async (t) => {
  // The hub plays the variant (its lists beside a `status`); the profile in force has no rule.
  const { failure: _failure, ...defaults } = variant.defaults ?? {}
  const without = { ...variant, $schema: undefined, login: undefined, defaults }
  const sandbox = await playing(t, VARIANT)
  const dir = tempDir(t)
  const configured = join(dir, 'configured.json')
  writeFileSync(configured, JSON.stringify(without))
  const env = { ...sandboxEnv(sandbox.url), UPSTREAM_PROFILE_FILE: configured }
  const success = json(t, await runProbe([...VALUES, '--pause-ms', '0', '--json'], env))
  t.same(success.differences, [], 'only success seen: no rule, nothing differs')
  t.match(success.hints, [/"status" beside the data was only ever "success".*no failure rule/])

  // A BL that makes the hub report a failure in a 200: both outcomes are seen.
  const failing = [
    '--npwp', F.declaration.npwp, '--bl-no', magicValue('FAILREJECTED'), '--bl-date', '2024-01-01',
    '--pause-ms', '0', '--json'
  ]
  const report = json(t, await runProbe(failing, env))
  const rule = report.profile.operations?.noblbc16?.failure ?? report.profile.defaults?.failure
  const seen = { statusField: 'status', successValues: ['success'] }
  t.same(rule, seen, 'the status beside the data, with the words seen')
  const file = join(dir, 'proposed.json')
  writeFileSync(file, JSON.stringify(report.profile))
  const { app } = await gateway(t, file)
  const npwp = magicValue('FAILREJECTED', 'npwp')
  const res = await app.inject({ url: `/v1/customs/bc16/bills-of-lading?npwp=${npwp}` })
  t.equal(res.statusCode, 422, res.body)
  t.equal(res.json().upstreamMessage, 'Permintaan tidak dapat diproses', 'read at errors.0.detail')
})

test('configured with the public-callers profile: exit 1, every difference listed', async (t) => {
  const sandbox = await playing(t, VARIANT)
  const env = { ...sandboxEnv(sandbox.url), UPSTREAM_PROFILE_FILE: PROFILE_FILES['public-callers'] }
  const out = await runProbe([...VALUES, '--pause-ms', '0', '--json'], env)
  const report = json(t, out)
  t.equal(out.code, 1)
  const unreached = report.operations.filter(o => !o.reached).map(o => o.operation)
  t.ok(unreached.length > 0)
  for (const id of unreached) {
    const listed = report.differences.some(d => d.setting === `operations.${id}`)
    t.ok(listed, `${id} not reached: listed`)
  }
  const table = await runProbe([...VALUES, '--pause-ms', '0'], env)
  t.match(table.stdout, `${report.differences.length} difference(s)`)
  t.notMatch(table.stdout, / 0\n/, 'no operation called shows 0 differences')
})

/** The gateway with `file` as its profile, before the sandbox playing the variant. */
function gateway (t: Test, file: string): ReturnType<typeof build> {
  return build(t, { sandbox: { profile: VARIANT }, env: { UPSTREAM_PROFILE_FILE: file } })
}

/** Values of every lookup route that find data. */
function lookupValues (id: string): Record<string, string> {
  const iso = (day: string) => `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6)}`
  const lists = F.containers as Record<string, { noBl: string, tglBl: string } | undefined>
  const containers = lists[id]
  if (containers !== undefined) return { blNo: containers.noBl, blDate: iso(containers.tglBl) }
  if (id.startsWith('noblbc')) return { npwp: F.taxpayer.npwp }
  const { npwp, pibNo, blNo, blDate } = F.declaration
  if (id === 'BC20ByNoPib' || id === 'BC20ByNoBL') return { npwp, pibNo, blNo, blDate }
  const sp2 = F.sp2
  return { npwp: sp2.npwp, blNo: sp2.blNo, blDate: sp2.blDate, containerNo: sp2.containerNo }
}
