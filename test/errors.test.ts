import { STATUS_CODES } from 'node:http'
import { test } from 'tap'
import { errors, gatewayError, isGatewayError, reasonPhrase, type ErrorCode } from '../src/errors.ts'

/** The contract's minimum codes (contract.md 2), with their allowed statuses. */
const CONTRACT: Record<string, number[]> = {
  VALIDATION_FAILED: [400],
  UNAUTHORIZED: [401],
  FORBIDDEN: [403],
  NOT_FOUND: [404],
  RATE_LIMITED: [429],
  UPSTREAM_REJECTED: [400, 422],
  UPSTREAM_NOT_FOUND: [404],
  UPSTREAM_AUTH_FAILED: [502],
  UPSTREAM_UNAVAILABLE: [502, 503],
  UPSTREAM_TIMEOUT: [504],
  UPSTREAM_BAD_RESPONSE: [502],
  INTERNAL: [500]
}

test('the error table holds every contract code with an allowed status', async (t) => {
  for (const [code, statuses] of Object.entries(CONTRACT)) {
    t.ok(code in errors, `${code} is defined`)
    const error = gatewayError(code as ErrorCode, {}, 'detail')
    t.ok(statuses.includes(error.statusCode), `${code}: default status ${error.statusCode}`)
  }
})

test('every error has a code equal to its key, a real status and a human message', async (t) => {
  for (const code of Object.keys(errors) as ErrorCode[]) {
    const error = gatewayError(code, {}, 'A detail.')
    t.equal(error.code, code)
    // 499 is nginx's, for a client that closed its connection: no reply reaches anyone.
    t.ok(STATUS_CODES[error.statusCode] ?? (error.statusCode === 499 && code === 'CLIENT_CLOSED_REQUEST'), `${code}: ${error.statusCode} is an HTTP status`)
    t.not(reasonPhrase(error.statusCode), 'Error', `${code}: its status has a reason phrase`)
    t.ok(error.statusCode >= 400, `${code}: an error status`)
    t.match(error.message, /^[A-Z]/, `${code}: message is a sentence`)
    t.ok(isGatewayError(error))
  }
  t.notOk(isGatewayError(new Error('plain')))
  t.notOk(isGatewayError(Object.assign(new Error('x'), { code: 'ECONNRESET' })))
})

test('a reused Idempotency-Key is a 422 of its own, distinct from the hub\'s refusals', async (t) => {
  const error = gatewayError('IDEMPOTENCY_KEY_REUSED')
  t.equal(error.statusCode, 422)
  t.match(error.message, /Idempotency-Key/)
  t.not(error.code, gatewayError('UPSTREAM_REJECTED').code)
})

test('an outcome the gateway cannot know is a 409 of its own: not a 5xx, which careful clients retry by themselves', async (t) => {
  const error = gatewayError('OUTCOME_UNKNOWN')
  t.equal(error.statusCode, 409)
  t.match(error.message, /Idempotency-Key/)
  t.match(error.message, /may have reached the customs hub/)
  t.match(error.message, /new key/, 'says what to do')
  t.equal(reasonPhrase(409), 'Conflict')
  t.equal(reasonPhrase(499), 'Client Closed Request')
  t.equal(reasonPhrase(299), 'Error', 'a status without a phrase')
})

test('extras override the status and carry the upstream message', async (t) => {
  const error = gatewayError('UPSTREAM_UNAVAILABLE', { statusCode: 503, retryAfter: '7', upstreamMessage: 'busy' })
  t.equal(error.statusCode, 503)
  t.equal(error.retryAfter, '7')
  t.equal(error.upstreamMessage, 'busy')
})
