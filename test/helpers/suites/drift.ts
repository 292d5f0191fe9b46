import { test } from 'tap'
import { OPERATIONS } from '../../../src/catalogue/operations.ts'
import { SANDBOX_FIXTURES as F } from '../../../src/sandbox/index.ts'
import { buildHub, routeUrl } from '../hubs.ts'
import type { Hub } from '../hubs.ts'

// What the gateway read beyond the documented forms of the hub, counted in
// gateway_hub_drift_total{operation,kind} and logged once per operation and
// kind: each route once with data, then a few faults through one container
// list (a list under another key, the front's 403 and 500, the
// operation's 404, two 200 answers reporting a failure).

const iso = (compact: string) => `${compact.slice(0, 4)}-${compact.slice(4, 6)}-${compact.slice(6)}`

const PAYLOADS: Record<string, object> = {
  'document_sp2/final': {},
  DetilBooking: { serviceOrderId: 'SO-1', price: 10, offeredAt: '2024-03-01T08:15:00+07:00' },
  'DetilBooking/isBooked': { booked: true }
}

function valuesFor (id: string): Record<string, string> {
  const container = (F.containers as Record<string, { noBl: string; tglBl: string } | undefined>)[
    id
  ]
  if (container !== undefined) return { blNo: container.noBl, blDate: iso(container.tglBl) }
  if (id.startsWith('noblbc')) return { npwp: F.taxpayer.npwp }
  if (id.startsWith('BC20')) {
    return {
      npwp: F.declaration.npwp,
      pibNo: F.declaration.pibNo,
      blNo: F.declaration.blNo,
      blDate: F.declaration.blDate
    }
  }
  return {
    npwp: F.sp2.npwp,
    blNo: F.sp2.blNo,
    blDate: F.sp2.blDate,
    containerNo: F.sp2.containerNo,
    sp2Id: F.sp2.sp2Id,
    bookingRequestId: F.bookingRequestId
  }
}

const FAULTS = ['DRIFT', '403', '500', '404', 'FAILNOTFOUND', 'FAILAUTH']

/** Per operation, the count of each kind of drift; an operation not named counts none. */
export type DriftCounts = Record<string, Record<string, number>>

/** `known`: operations whose counts are not settled yet, with why (a todo). */
export function driftSuite (
  hub: Hub,
  expected: DriftCounts,
  known: Record<string, string> = {}
): void {
  test(`drift against the ${hub.name} hub: counted by operation and kind, logged once ` +
    'each', async (t) => {
    const { app, logs } = await buildHub(t, hub)
    for (const op of OPERATIONS) {
      const payload = PAYLOADS[op.id]
      await app.inject({
        method: op.method,
        url: routeUrl(hub, op.id, valuesFor(op.id)),
        ...(payload === undefined ? {} : { payload })
      })
    }
    for (const fault of FAULTS) {
      await app.inject({ url: routeUrl(hub, 'kontainerbc261', { blNo: `SBX-${fault}` }) })
    }

    const metric = await app.metrics.registry.getSingleMetric('gateway_hub_drift_total')?.get()
    const counted: DriftCounts = {}
    for (const { labels, value } of metric?.values ?? []) {
      const operation = String(labels.operation)
      counted[operation] = { ...counted[operation], [String(labels.kind)]: value }
    }
    for (const op of OPERATIONS) {
      const todo = known[op.id]
      t.strictSame(
        counted[op.id] ?? {},
        expected[op.id] ?? {},
        `${op.id}: what the hub sent beyond the documented forms`,
        todo === undefined ? {} : { todo }
      )
    }
    const lines = logs.filter((line) => line.level === 40 && typeof line.drift === 'string')
    t.strictSame(
      lines.map((line) => `${String(line.operation)} ${String(line.drift)}`).sort(),
      Object.entries(counted)
        .flatMap(([operation, kinds]) => Object.keys(kinds).map((kind) => `${operation} ${kind}`))
        .sort(),
      'one warning per operation and kind, however many were counted'
    )
    const scraped = await app.inject({ url: '/metrics' })
    for (const [kind, count] of Object.entries(expected.kontainerbc261 ?? {})) {
      t.match(
        scraped.body,
        `gateway_hub_drift_total{operation="kontainerbc261",kind="${kind}"} ${count}`,
        `/metrics shows kontainerbc261's ${kind}`
      )
    }
  })
}
