import { HUBS } from '../hubs.ts'
import { driftSuite } from '../suites/drift.ts'
import { failureSuite } from '../suites/failures.ts'
import { requestSuite } from '../suites/hub-requests.ts'
import { loginSuite } from '../suites/login.ts'
import { routeSuite } from '../suites/routes.ts'

// The gateway with deploy/profiles/documented.json against the sandbox
// playing the same file: what the default does without a profile, the same
// expectations throughout.

const hub = HUBS.documented

routeSuite(hub)
requestSuite(hub)
failureSuite(hub)

// A list under another key than the document's is the only drift.
driftSuite(hub, { kontainerbc261: { 'answer-key': 1 } })

loginSuite(hub)
