import { HUBS } from '../hubs.ts'
import { driftSuite } from '../suites/drift.ts'
import { failureSuite } from '../suites/failures.ts'
import { requestSuite } from '../suites/hub-requests.ts'
import { loginSuite } from '../suites/login.ts'
import { routeSuite } from '../suites/routes.ts'

// The gateway with test/fixtures/profiles/other-hub.json (a hub neither
// shipped profile fits) against the sandbox playing the same file: every
// route, every operation's headers, the failure matrix.

const hub = HUBS['other-hub']

routeSuite(hub)
requestSuite(hub)

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
