import { readFile } from 'node:fs/promises'
import t from 'tap'
import { ERROR_TABLE, type ErrorEntry } from '../src/errors.ts'
import { ERRORS_REFERENCE_PATH } from '../scripts/docs/errors-reference.ts'
import { METRICS_REFERENCE_PATH, metricRows } from '../scripts/docs/metrics-reference.ts'
import { generateReference, OPENAPI_PATH } from '../scripts/docs/openapi-document.ts'
import {
  membersOf, PROFILE_REFERENCE_PATH, profileSchemas
} from '../scripts/docs/profile-reference.ts'
import { ROUTES_REFERENCE_PATH } from '../scripts/docs/routes-reference.ts'
import { SANDBOX_REFERENCE_PATH } from '../scripts/docs/sandbox-reference.ts'
import { OPERATIONS } from '../src/catalogue/operations.ts'
import { BUILT_IN } from '../src/profile/built-in.ts'
import { FAULTS, magicValue, SANDBOX_API_KEY, SANDBOX_FIXTURES } from '../src/sandbox/index.ts'
import { build } from './helper.ts'

// docs/reference/: the routes, error codes, metrics, hub profile members and the sandbox's
// values, written by `npm run openapi` from the code. The committed pages must be what the
// code makes now.

const ROOT = new URL('../', import.meta.url)
const REGENERATE = 'run `npm run openapi` and commit the result'

async function committed (path: string): Promise<string> {
  return await readFile(new URL(path, ROOT), 'utf8')
}

const generated = await generateReference()

t.test('drift: the committed reference pages are what the code generates', async (t) => {
  t.same(Object.keys(generated).sort(), [ERRORS_REFERENCE_PATH, METRICS_REFERENCE_PATH,
    PROFILE_REFERENCE_PATH, ROUTES_REFERENCE_PATH, SANDBOX_REFERENCE_PATH].sort())
  for (const [path, text] of Object.entries(generated)) {
    t.equal(await committed(path), text, `${path} is current: ${REGENERATE}`)
  }
})

t.test('the routes page has every route of the document, with its scope and answers', async (t) => {
  const page = generated[ROUTES_REFERENCE_PATH] ?? ''
  const doc = JSON.parse(await committed(OPENAPI_PATH)) as { paths: Record<string, object> }
  const routes = Object.entries(doc.paths)
    .flatMap(([path, item]) => Object.keys(item).map(method => `${method.toUpperCase()} ${path}`))
  t.ok(routes.length > 20, `${routes.length} routes in the document`)
  for (const route of routes) t.match(page, `| \`${route}\` |`, `${route} has a row`)
  const row = (route: string) => page.split('\n').find(line => line.startsWith(`| \`${route}\` |`))
  t.match(row('GET /v1/shipments/{blNo}'), /\| `customs:read` and `sp2:read` \|/, 'both scopes')
  t.match(row('GET /v1/events'), /\(WebSocket\).*101, 400 \(VALIDATION_FAILED\).*426/)
  t.match(row('GET /v1/events/stream'), /503 \(OVERLOADED, EVENTS_UNAVAILABLE, SHUTTING_DOWN\)/)
  t.match(row('POST /v1/events/tickets'), /\| `events:read` \|/)
  t.match(row('POST /v1/bookings/{bookingRequestId}/offers'), /`price`\*/, 'body fields')
  t.match(page, /`GET \/openapi\.json`/, 'the routes the document leaves out')
  t.match(page, /\| `npwp` \| query \| a taxpayer number of 15 or 16 digits/, 'rules, as 400s say')
})

t.test('the errors page has every code of the table, with its statuses and when', async (t) => {
  const page = generated[ERRORS_REFERENCE_PATH] ?? ''
  const entries: Array<[string, ErrorEntry]> = Object.entries(ERROR_TABLE)
  for (const [code, entry] of entries) {
    const statuses = [entry.status, ...entry.also ?? []].join(', ')
    t.ok(page.includes(`| \`${code}\` | ${statuses} |`), `${code}: ${statuses}`)
    t.ok(page.includes(entry.when), `${code}: when`)
    t.ok(entry.when.length <= 200, `${code}: one short sentence`)
  }
})

t.test('every status the document gives a code is one the error table gives it', async (t) => {
  type Responses = Record<string, { content?: Record<string, { examples?: object }> }>
  const doc = JSON.parse(await committed(OPENAPI_PATH)) as {
    paths: Record<string, Record<string, { responses?: Responses }>>
  }
  const statuses = new Map(Object.entries(ERROR_TABLE)
    .map(([code, entry]: [string, ErrorEntry]) => [code, [entry.status, ...entry.also ?? []]]))
  let checked = 0
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        for (const code of Object.keys(response.content?.['application/json']?.examples ?? {})) {
          checked++
          t.ok(statuses.get(code)?.includes(Number(status)),
            `${method.toUpperCase()} ${path}: ${status} ${code} is in the table`)
        }
      }
    }
  }
  t.ok(checked > 100, `${checked} answers checked`)
})

t.test('the metrics page names every metric of the app as the tests build it', async (t) => {
  const page = generated[METRICS_REFERENCE_PATH] ?? ''
  const { app } = await build(t)
  const rows = metricRows(app.metrics.registry)
  t.ok(rows.some(row => row.name === 'gateway_http_requests_total'), 'the gateway\'s own')
  for (const row of rows.filter(row => row.name.startsWith('gateway_'))) {
    const labels = row.labels.map(label => `\`${label}\``).join(', ')
    const expected = `| \`${row.name}\` | ${row.type} | ${labels} |`
    t.ok(page.includes(expected), `${row.name}: type and labels`)
  }
  t.ok(rows.some(row => row.name.startsWith('process_')), 'the default metrics')
  t.match(page, /\| `process_\*`, `nodejs_\*` \|/, 'as one row')
  t.match(page, /\| `gateway_redis_up` \| gauge \|.*only with `REDIS_URL` set/, 'with Redis')
})

t.test('the profile page has every member of the schema, with its default', async (t) => {
  const page = generated[PROFILE_REFERENCE_PATH] ?? ''
  const { file, entry } = profileSchemas()
  // The file's own members, then those of `defaults` and of an operation's entry, unprefixed.
  const members = [...membersOf(file).filter(m => !/^(defaults|operations)(\.|$)/.test(m.path)),
    ...membersOf(file.properties?.defaults ?? {}), ...membersOf(entry)]
  t.ok(members.length > 50, `${members.length} members`)
  for (const { path } of members) t.match(page, `| \`${path}\` |`, `${path} has a row`)
  const row = (member: string) =>
    page.split('\n').find(line => line.startsWith(`| \`${member}\` |`))
  t.match(row('timeZone'), `| \`${BUILT_IN.timeZone}\` |`, 'a default of the file')
  t.match(row('retries.count'), `| \`${BUILT_IN.retries.count}\` |`, 'a default of how it calls')
  t.match(row('dateSent'), /\| `YYYYMMDD` \| The form dates are sent in \|/, 'a setting\'s')
  t.notMatch(row('connections.max'), /\(default/, 'the default said once')
  for (const op of OPERATIONS) t.match(page, `| \`${op.id}\` |`, `${op.id} has a row`)
  t.match(page, /\| `kontainerbc20` \| GET, a list \|.*\| `blDate: tglBl` \| `blNo` \|/,
    'an operation\'s parameters and what it may add')
})

t.test('the sandbox page has every fault with its code, and the values to try', async (t) => {
  const page = generated[SANDBOX_REFERENCE_PATH] ?? ''
  for (const fault of FAULTS) {
    t.ok(page.includes(`| \`${fault.name}\` | \`${fault.code}\` |`), `${fault.name}: its code`)
    t.ok(page.includes(fault.does), `${fault.name}: what it does`)
  }
  for (const form of ['text', 'npwp', 'uuid', 'date'] as const) {
    t.ok(page.includes(`\`${magicValue('503', form)}\``), `the ${form} form`)
  }
  t.ok(page.includes(SANDBOX_API_KEY), 'the credentials')
  for (const npwp of SANDBOX_FIXTURES.npwps) t.match(page, `| \`${npwp}\` |`, `taxpayer ${npwp}`)
  const { sp2, declaration, containers } = SANDBOX_FIXTURES
  t.ok(page.includes(`\`${sp2.sp2Id}\``), 'an SP2 document')
  t.ok(page.includes(`\`${declaration.pibNo}\``), 'a PIB number')
  for (const [operation, fixture] of Object.entries(containers)) {
    t.ok(page.includes(`| \`${operation}\` | \`${fixture.noBl}\` | \`${fixture.tglBl}\` |`),
      `${operation}: its fixture's BL`)
  }
})
