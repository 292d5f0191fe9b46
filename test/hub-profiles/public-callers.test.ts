import { HUBS } from '../hubs.ts'
import { driftSuite } from '../suites/drift.ts'
import { failureSuite } from '../suites/failures.ts'
import { requestSuite } from '../suites/hub-requests.ts'
import { loginSuite } from '../suites/login.ts'
import { routeSuite } from '../suites/routes.ts'

// The gateway with deploy/profiles/public-callers.json against the sandbox
// playing the same file: every route, every operation's headers, the failure
// matrix (docs/hub.md#playing-a-profile).

const hub = HUBS['public-callers']

// The finalization answers the document's state (`Finish`) in `status`: the
// profile gives document_sp2/final the default failure rule with `finish`
// among the success words, so a finished document is not read as a failure.
routeSuite(hub)
requestSuite(hub)

// The profile's failure rules (a `status` that is not success, an error text
// without data; the texts mapped by `codes`), and the declarations' own
// (no status rule; not found is UPSTREAM_NOT_FOUND).
const REJECTED = { status: 422, code: 'UPSTREAM_REJECTED', upstreamMessage: true }
failureSuite(hub, {
  // {"status":"ok"}: a status that is no success, whose text no rule matches.
  NOKEY: { status: 422, code: 'UPSTREAM_REJECTED', byRoute: { record: { status: 502, code: 'UPSTREAM_BAD_RESPONSE' } } },
  // {"status":"Data tidak ditemukan"}: no data; a record by PIB has no status rule, an offer is not found.
  FAILNOTFOUND: { status: 200, byRoute: { record: { status: 502, code: 'UPSTREAM_BAD_RESPONSE' }, write: { status: 404, code: 'UPSTREAM_NOT_FOUND' } } },
  FAILREJECTED: REJECTED,
  // {"message":"Data tidak ditemukan"}: no data; the declaration not found; an offer's answer has no data to lack.
  FAILNODATA: { status: 200, byRoute: { record: { status: 404, code: 'UPSTREAM_NOT_FOUND', upstreamMessage: true }, write: { status: 200 } } },
  FAILAUTH: { status: 502, code: 'UPSTREAM_AUTH_FAILED', upstreamMessage: true }
})

// Days without their time (BL lists, declarations), numbers, flags and nulls
// as strings (the SP2 records, the booked answer), the front's error in
// `error`, 200 answers reporting a failure.
driftSuite(hub, {
  noblbc16: { 'date-form': 1 },
  noblbc20: { 'date-form': 1 },
  noblbc23: { 'date-form': 1 },
  BC20ByNoPib: { 'date-form': 1 },
  BC20ByNoBL: { 'date-form': 1 },
  'document_sp2_container/cargo_owner': { 'number-string': 1, 'null-string': 1 },
  'document_sp2/host-to-host': { 'number-string': 1, 'flag-string': 1, 'null-string': 1 },
  'DetilBooking/isBooked': { 'flag-string': 1 },
  kontainerbc261: { 'answer-key': 1, 'error-field': 1, 'failure-2xx': 2 },
  // The finalization's `is_finished`, stringified as every value is.
  'document_sp2/final': { 'flag-string': 1 }
})

// The login the hub's callers show: POST {username,password} at
// /nle-oauth/v1/user/login answered in the {"status","message","item"}
// envelope, renewed by a POST with Authorization: Bearer <refresh token> at
// /nle-oauth/v1/user/update-token; all of it read from the profile alone.
loginSuite(hub)
