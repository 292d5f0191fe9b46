import { STATUS_CODES } from 'node:http'
import pino from 'pino'
import { test } from 'tap'
import {
  codeOf, errors, gatewayError, isGatewayError, reasonOf, reasonPhrase, remade, upstreamStatusOf,
  type ErrorCode, type GatewayError
} from '../../src/errors.ts'
import { afterHubActed } from '../../src/upstream/failures.ts'

/** The contract's minimum codes (docs/api.md#the-envelope-and-errors), with their statuses. */
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
    t.ok(
      STATUS_CODES[error.statusCode] ??
        (error.statusCode === 499 && code === 'CLIENT_CLOSED_REQUEST'),
      `${code}: ${error.statusCode} is an HTTP status`
    )
    t.not(reasonPhrase(error.statusCode), 'Error', `${code}: its status has a reason phrase`)
    t.ok(error.statusCode >= 400, `${code}: an error status`)
    t.match(error.message, /^[A-Z]/, `${code}: message is a sentence`)
    t.ok(isGatewayError(error))
  }
  t.notOk(isGatewayError(new Error('plain')))
  t.notOk(isGatewayError(Object.assign(new Error('x'), { code: 'ECONNRESET' })))
})

test("a reused Idempotency-Key is a 422 of its own, distinct from the hub's " +
  'refusals', async (t) => {
  const error = gatewayError('IDEMPOTENCY_KEY_REUSED')
  t.equal(error.statusCode, 422)
  t.match(error.message, /Idempotency-Key/)
  t.not(error.code, gatewayError('UPSTREAM_REJECTED').code)
})

test('an outcome the gateway cannot know is a 409 of its own: not a 5xx, which careful clients ' +
  'retry by themselves', async (t) => {
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
  const error = gatewayError('UPSTREAM_UNAVAILABLE', {
    statusCode: 503,
    retryAfter: '7',
    upstreamMessage: 'busy'
  })
  t.equal(error.statusCode, 503)
  t.equal(error.retryAfter, '7')
  t.equal(error.upstreamMessage, 'busy')
})

test('an error carries as fields only the extras it was made with, read-only', async (t) => {
  const error = gatewayError('UPSTREAM_REJECTED', {
    statusCode: 400,
    upstreamStatus: 400,
    upstreamMessage: 'Parameter tidak valid'
  })
  const extras = ['upstreamMessage', 'upstreamStatus', 'retryAfter', 'details', 'cause']
  t.same(
    Object.keys(error)
      .filter((key) => extras.includes(key))
      .sort(),
    ['upstreamMessage', 'upstreamStatus']
  )
  const internal = gatewayError('INTERNAL')
  t.notOk(Object.keys(internal).includes('retryAfter'), 'no listed field for an extra not given')
  t.equal(internal.retryAfter, undefined)
  // @ts-expect-error: an error says what it was made to say; another answer is another error
  const change = (made: GatewayError) => { made.retryAfter = '1' }
  t.type(change, 'function')
})

/** Sets a field as any code could, past the types (this module is strict: a refusal throws). */
function assign (target: object, key: string, value: unknown): void {
  (target as Record<string, unknown>)[key] = value
}

/** Deletes a field, as assign sets one. */
function remove (target: object, key: string): void {
  delete (target as Record<string, unknown>)[key]
}

test('an error is complete when made: setting, attaching or deleting a field throws', async (t) => {
  const cause = new Error('x')
  const error = gatewayError('UPSTREAM_UNAVAILABLE', { statusCode: 503, upstreamStatus: 5, cause })
  const attempts: Record<string, () => void> = {
    'its code': () => { assign(error, 'code', 'INTERNAL') },
    'its status': () => { assign(error, 'statusCode', 500) },
    'its message': () => { assign(error, 'message', 'something else') },
    'an extra it was made with': () => { assign(error, 'upstreamStatus', 502) },
    'an extra it was made without': () => { assign(error, 'hubMayHaveActed', true) },
    'an extra, by Object.assign': () => { Object.assign(error, { retryAfter: '1' }) },
    'its cause': () => { assign(error, 'cause', undefined) },
    'deleting an extra': () => { remove(error, 'upstreamStatus') }
  }
  for (const [what, attempt] of Object.entries(attempts)) t.throws(attempt, TypeError, what)
  t.match(error, { code: 'UPSTREAM_UNAVAILABLE', statusCode: 503, upstreamStatus: 5, cause })
  t.equal(error.message, 'The customs hub did not answer')
  t.equal(error.hubMayHaveActed, undefined)
  t.equal(error.retryAfter, undefined)
})

test('an error that must say more is a new error, the one it came from its cause', async (t) => {
  const syntax = new SyntaxError('Unexpected end of JSON input')
  const original = gatewayError('UPSTREAM_BAD_RESPONSE', { upstreamStatus: 200, cause: syntax })
  const marked = remade(original, { hubMayHaveActed: true })
  t.not(marked, original)
  t.ok(isGatewayError(marked, 'UPSTREAM_BAD_RESPONSE'))
  t.match(marked, { statusCode: 502, upstreamStatus: 200, hubMayHaveActed: true })
  t.equal(marked.message, original.message)
  t.equal(marked.cause, original)
  t.equal(original.hubMayHaveActed, undefined, 'the original as it was made')
  t.equal(reasonOf(marked), syntax, 'a failure log line shows the cause under both')
  const alone = gatewayError('UPSTREAM_TIMEOUT')
  t.equal(reasonOf(alone), alone, 'one without a cause is its own reason')
  t.equal(reasonOf(syntax), syntax)
})

test('a failure after a 2xx is marked: the hub may have acted (a new error)', async (t) => {
  const original = gatewayError('UPSTREAM_BAD_RESPONSE')
  const marked = afterHubActed(original)
  t.ok(isGatewayError(marked) && marked.hubMayHaveActed === true && marked.cause === original)
  t.equal(afterHubActed(marked), marked, 'one already marked as it is')
  const plain = new Error('not ours')
  t.equal(afterHubActed(plain), plain, 'anything else thrown as it is')
  t.same(Object.keys(plain), [], 'and not changed')
})

// Not frozen: pino's serializer marks each error it logs for a moment, which a frozen one refuses.
test('pino logs an error of the table', async (t) => {
  const lines: string[] = []
  const log = pino({}, { write: (line: string) => { lines.push(line) } })
  const timeout = gatewayError('UPSTREAM_TIMEOUT', { upstreamStatus: 504 })
  const error = remade(timeout, { hubMayHaveActed: true })
  log.error({ err: error }, 'failed')
  const { err } = JSON.parse(lines[0] ?? '{}') as { err?: Record<string, unknown> }
  t.match(err, { code: 'UPSTREAM_TIMEOUT', statusCode: 504, upstreamStatus: 504 })
  t.equal(err?.['hubMayHaveActed'], true)
  t.notOk(err !== undefined && 'retryAfter' in err, 'an extra not given is not logged')
})

test("isGatewayError tells the table's errors, of given codes, from anything else " +
  'thrown', async (t) => {
  const timeout: unknown = gatewayError('UPSTREAM_TIMEOUT')
  t.ok(isGatewayError(timeout, 'UPSTREAM_UNAVAILABLE', 'UPSTREAM_TIMEOUT'))
  t.notOk(isGatewayError(timeout, 'UPSTREAM_UNAVAILABLE'), 'another code')
  t.notOk(
    isGatewayError(Object.assign(new Error('x'), { code: 'UPSTREAM_TIMEOUT', statusCode: 504 })),
    'a copy of a code is not one'
  )
  if (isGatewayError(timeout, 'UPSTREAM_TIMEOUT')) {
    const code: 'UPSTREAM_TIMEOUT' = timeout.code
    t.equal(code, 'UPSTREAM_TIMEOUT')
  }
  t.notOk(isGatewayError({ code: 'UPSTREAM_TIMEOUT' }), 'not an Error')
  t.notOk(isGatewayError(null))
})

test("upstreamStatusOf reads the hub's status off the errors made from its answers " +
  'only', async (t) => {
  t.equal(upstreamStatusOf(gatewayError('UPSTREAM_UNAVAILABLE', { upstreamStatus: 503 })), 503)
  t.equal(upstreamStatusOf(gatewayError('UPSTREAM_TIMEOUT')), undefined)
  t.equal(
    upstreamStatusOf(Object.assign(new Error('x'), { upstreamStatus: 503 })),
    undefined,
    'a look-alike is not one'
  )
  t.equal(upstreamStatusOf(undefined), undefined)
})

test('codeOf reads the string code of anything thrown', async (t) => {
  t.equal(codeOf(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })), 'ECONNREFUSED')
  t.equal(codeOf(gatewayError('UPSTREAM_TIMEOUT')), 'UPSTREAM_TIMEOUT')
  t.equal(
    codeOf(new DOMException('too slow', 'TimeoutError')),
    undefined,
    "a DOMException's code is a number"
  )
  t.equal(codeOf(new Error('plain')), undefined)
  t.equal(codeOf('ECONNRESET'), undefined)
  t.equal(codeOf(null), undefined)
})
