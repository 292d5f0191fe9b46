import { test } from 'tap'
import { SANDBOX_FIXTURES as F } from '../../../src/sandbox/index.ts'
import { hubRequest } from '../../helpers/hub-profiles.ts'
import { buildHub, HUBS, routeUrl } from '../../helpers/hubs.ts'
import { driftSuite } from '../../helpers/suites/drift.ts'
import { failureSuite } from '../../helpers/suites/failures.ts'
import { requestSuite } from '../../helpers/suites/hub-requests.ts'
import { loginSuite } from '../../helpers/suites/login.ts'
import { routeSuite } from '../../helpers/suites/routes.ts'

// The gateway with test/fixtures/profiles/other-hub.json (a hub neither
// shipped profile fits) against the sandbox playing the same file: every
// route, every operation's headers, the failure matrix.

const hub = HUBS['other-hub']

routeSuite(hub)
requestSuite(hub)

// `notFound: "404"` on BC20ByNoBL: the hub says a BL has no declaration with a 404.
test('a BL without BC 2.0 declarations: the hub answers 404, the route []', async (t) => {
  const { app, sandbox } = await buildHub(t, hub)
  const [bl] = F.taxpayer.bc16
  const values = { blNo: bl!.blNo, npwp: F.taxpayer.npwp, blDate: bl!.blDate }
  const url = routeUrl(hub, 'BC20ByNoBL', values)
  const res = await app.inject({ url })
  t.equal(res.statusCode, 200, res.body)
  t.same(res.json().data, [])
  t.equal(res.json().meta.count, 0)
  t.equal(sandbox.requests.at(-1)?.operation, 'BC20ByNoBL')
  const asked = hubRequest(hub.profile, 'BC20ByNoBL', values)
  const answer = await fetch(`${sandbox.url}${asked.path}`, { headers: asked.headers })
  t.same([answer.status, await answer.json()], [404, { error: 'Data tidak ditemukan' }],
    'the hub\'s own answer: a 404 with its text')
  const found = await app.inject({
    url: routeUrl(hub, 'BC20ByNoBL', {
      blNo: F.declaration.blNo, npwp: F.declaration.npwp, blDate: F.declaration.blDate
    })
  })
  t.equal(found.json().meta.count, F.blWithTwoDeclarations.pibNos.length, 'a BL with some: 200')
})

// A `result` that is not OK is a failure, answered as the status its `code`
// names; an error text without a `result` is no failure (an answer without
// its data, as in the matrix).
failureSuite(hub, {
  FAILNOTFOUND: { status: 404, code: 'UPSTREAM_NOT_FOUND' },
  FAILREJECTED: { status: 422, code: 'UPSTREAM_REJECTED', upstreamMessage: true },
  FAILAUTH: { status: 502, code: 'UPSTREAM_AUTH_FAILED', upstreamMessage: true }
})

// Days as YYYYMMDD, null as "", errors in `fault.text` and `error`, 200
// answers reporting a failure. The lists under `data`, where the profile says,
// are no tolerance and not counted; one moved elsewhere is (the DRIFT fault).
driftSuite(hub, {
  noblbc16: { 'date-form': 1 },
  noblbc20: { 'date-form': 1 },
  noblbc23: { 'date-form': 1 },
  BC20ByNoPib: { 'date-form': 1 },
  BC20ByNoBL: { 'date-form': 1 },
  'document_sp2/host-to-host': { 'null-string': 1 },
  kontainerbc261: { 'answer-key': 1, 'error-field': 2, 'failure-2xx': 2 }
})

loginSuite(hub)
