import { HUBS } from '../../helpers/hubs.ts'
import { driftSuite } from '../../helpers/suites/drift.ts'
import { failureSuite } from '../../helpers/suites/failures.ts'
import { requestSuite } from '../../helpers/suites/hub-requests.ts'
import { loginSuite } from '../../helpers/suites/login.ts'
import { routeSuite } from '../../helpers/suites/routes.ts'

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
