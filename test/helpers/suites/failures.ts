import { test } from 'tap'
import { SANDBOX_FIXTURES as F } from '../../../src/sandbox/index.ts'
import { buildHub, routeUrl } from '../hubs.ts'
import type { Hub } from '../hubs.ts'

/**
 * The failure matrix: each sandbox fault through the gateway, mapped to the
 * contract's status and code (docs/api.md#the-envelope-and-errors), through a route of each
 * response shape. Timeouts are short here so the hang and slow faults
 * finish quickly. A profile changes what some answers mean (a 2xx that
 * reports a failure, its error fields); its suite says which rows change.
 */
const FAST = { defaults: { timeouts: { headersMs: 400, bodyMs: 400 } } }

export type RouteShape = 'keyed list' | 'bare list' | 'record' | 'write'

export interface Row {
  status: number
  code?: string
  /** true: the hub's text is passed on; false: it must not be. */
  upstreamMessage?: boolean
  retryAfter?: string
}

/**
 * A fault's row, and where a route shape differs from it ('skip': the fault means nothing there).
 */
export type Expected = Row & { byRoute?: Partial<Record<RouteShape, Row | 'skip'>> }

/**
 * What a 200 answer of an unexpected shape is: unreadable for a lookup; an offer's answer is not
 * described, so any object passes.
 */
const UNREADABLE: Expected = {
  status: 502,
  code: 'UPSTREAM_BAD_RESPONSE',
  byRoute: { write: { status: 200 } }
}
const LISTS_ONLY = { record: 'skip', write: 'skip' } as const

export const MATRIX: Record<string, Expected> = {
  500: { status: 502, code: 'UPSTREAM_UNAVAILABLE', upstreamMessage: false },
  502: { status: 502, code: 'UPSTREAM_UNAVAILABLE', upstreamMessage: false },
  503: { status: 503, code: 'UPSTREAM_UNAVAILABLE', upstreamMessage: false },
  504: { status: 502, code: 'UPSTREAM_UNAVAILABLE', upstreamMessage: false },
  404: { status: 404, code: 'UPSTREAM_NOT_FOUND', upstreamMessage: true },
  401: { status: 502, code: 'UPSTREAM_AUTH_FAILED', upstreamMessage: true },
  403: { status: 502, code: 'UPSTREAM_AUTH_FAILED', upstreamMessage: true },
  429: { status: 503, code: 'UPSTREAM_UNAVAILABLE', upstreamMessage: true, retryAfter: '7' },
  400: { status: 400, code: 'UPSTREAM_REJECTED', upstreamMessage: true },
  422: { status: 422, code: 'UPSTREAM_REJECTED', upstreamMessage: true },
  MALFORMED: { status: 502, code: 'UPSTREAM_BAD_RESPONSE' },
  HTML: { status: 502, code: 'UPSTREAM_BAD_RESPONSE' },
  RESET: { status: 502, code: 'UPSTREAM_UNAVAILABLE' },
  NOKEY: UNREADABLE,
  TRUNCATED: { status: 502, code: 'UPSTREAM_BAD_RESPONSE' },
  SHAPE: { status: 502, code: 'UPSTREAM_BAD_RESPONSE' },
  HANG: { status: 504, code: 'UPSTREAM_TIMEOUT' },
  SLOW: { status: 504, code: 'UPSTREAM_TIMEOUT' },
  EMPTY: { status: 200, byRoute: LISTS_ONLY },
  DRIFT: { status: 200, byRoute: LISTS_ONLY },
  // A hub without failure rules never reports a failure in a 200: these are answers without their
  // data.
  FAILNOTFOUND: UNREADABLE,
  FAILREJECTED: UNREADABLE,
  FAILNODATA: UNREADABLE,
  FAILAUTH: UNREADABLE
}

const CODES: Record<string, string> = {
  SLOW: '001',
  HANG: '002',
  MALFORMED: '900',
  HTML: '901',
  RESET: '902',
  EMPTY: '903',
  DRIFT: '904',
  NOKEY: '905',
  TRUNCATED: '906',
  SHAPE: '907',
  FAILNOTFOUND: '908',
  FAILREJECTED: '909',
  FAILNODATA: '910',
  FAILAUTH: '911',
  SNAKE: '912'
}

/** One route of each response shape, with the fault placed in the parameter it fits. */
function requests (
  hub: Hub
): Record<
  RouteShape,
  (fault: string, code: string) => { method?: 'GET' | 'POST'; url: string; payload?: object }
> {
  return {
    'keyed list': (fault) => ({ url: routeUrl(hub, 'kontainerbc261', { blNo: `SBX-${fault}` }) }),
    'bare list': (_fault, code) => ({
      url: routeUrl(hub, 'document_sp2/host-to-host', {
        npwp: `990000000000${code}`,
        blNo: F.sp2.blNo,
        blDate: F.sp2.blDate
      })
    }),
    record: (fault) => ({
      url: routeUrl(hub, 'BC20ByNoPib', { pibNo: `SBX-${fault}`, npwp: F.declaration.npwp })
    }),
    write: (fault) => ({
      method: 'POST',
      url: `/v1/bookings/SBX-${fault}/offers`,
      payload: { serviceOrderId: 'SO-1', price: 10, offeredAt: '2024-03-01T08:15:00+07:00' }
    })
  }
}

/** `changes`: the rows that differ from the matrix against this hub. */
export function failureSuite (hub: Hub, changes: Record<string, Expected> = {}): void {
  test(`failure matrix against the ${hub.name} hub`, async (t) => {
    const { app } = await buildHub(t, hub, { profile: FAST, sandbox: { slowMs: 1500 } })
    const matrix = { ...MATRIX, ...changes }
    for (const [shape, request] of Object.entries(requests(hub)) as Array<
      [RouteShape, ReturnType<typeof requests>[RouteShape]]
    >) {
      t.test(`through a ${shape} route`, async (t) => {
        for (const [fault, expected] of Object.entries(matrix)) {
          const row = expected.byRoute?.[shape] ?? expected
          if (row === 'skip') continue
          const code = CODES[fault] ?? fault
          const started = performance.now()
          const res = await app.inject(request(fault, code))
          const ms = Math.round(performance.now() - started)
          t.equal(
            res.statusCode,
            row.status,
            `${fault}: status (${ms} ms): ${res.body.slice(0, 200)}`
          )
          if (row.code === undefined) continue
          const body = res.json()
          t.equal(body.code, row.code, `${fault}: code`)
          t.equal(body.statusCode, row.status)
          t.type(body.message, 'string')
          t.equal(body.requestId, res.headers['x-request-id'])
          if (row.upstreamMessage === true) {
            t.type(body.upstreamMessage, 'string', `${fault}: ` +
            'upstreamMessage passed on')
          }
          if (row.upstreamMessage === false) {
            t.notOk(
              'upstreamMessage' in body,
              `${fault}: a 5xx passes no message on (an HTML page has none; a JSON one may name ` +
              'hosts and files)'
            )
          }
          if (row.retryAfter !== undefined) {
            t.equal(
              res.headers['retry-after'],
              row.retryAfter,
              `${fault}: ` + 'retry-after passed on'
            )
          }
        }
      })
    }
  })
}
