import { test } from 'tap'
import type { Test } from 'tap'
import { operationsOf } from '../../../src/catalogue/operations.ts'
import { SANDBOX_FIXTURES as F } from '../../../src/sandbox/index.ts'
import { paramsOf } from '../hub-profiles.ts'
import { buildHub, dayOnly, keyHeaders, routeUrl, sentDate } from '../hubs.ts'
import type { Hub } from '../hubs.ts'

// Every route against one hub: the sandbox and the gateway playing the same
// profile (test/helpers/hubs.ts), or neither (the default, test/app/routes.test.ts). One
// gateway and one sandbox serve all the checks of a hub, one after another.

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?\+07:00$/
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/

const iso = (compact: string) => `${compact.slice(0, 4)}-${compact.slice(4, 6)}-${compact.slice(6)}`

/** Every key of a JSON value, all the way down. */
function keysOf (value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) keysOf(item, out)
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      out.push(key)
      keysOf(item, out)
    }
  }
  return out
}

/**
 * `known`: checks (by title) where the gateway and the sandbox read the
 * hub's profile differently and the difference is not settled yet, with
 * why; they run as todo, and pass when it is.
 */
export function routeSuite (hub: Hub, known: Record<string, string> = {}): void {
  test(`every route against the ${hub.name} hub`, async (t) => {
    const { app, sandbox } = await buildHub(t, hub)
    const check = (name: string, fn: (t: Test) => Promise<void>) =>
      t.test(name, known[name] === undefined ? {} : { todo: known[name] }, fn)
    t.beforeEach(() => { sandbox.reset() })
    const last = () => sandbox.requests.at(-1)
    const sp2Url = routeUrl(hub, 'document_sp2/host-to-host', {
      npwp: F.sp2.npwp,
      blNo: F.sp2.blNo,
      blDate: F.sp2.blDate
    })

    check('the booked answer speaks the dialect: booleans and the API\'s names', async (t) => {
      for (const booked of [true, false]) {
        const res = await app.inject({
          method: 'POST',
          url: `/v1/bookings/${F.bookingRequestId}/booked`,
          payload: { booked }
        })
        t.equal(res.statusCode, 200, res.body)
        t.same(
          res.json().data,
          {
            bookingRequestId: F.bookingRequestId,
            booked,
            note: '',
            upstreamMessage: 'Booking berhasil diperbarui'
          },
          `booked ${booked}`
        )
        t.notMatch(res.body, /isBooked|idRequestBooking/, 'no hub name left')
      }
    })

    check(
      "no name of one meaning is another's: customs containerType is words, the SP2 ISO code has " +
      'its own name',
      async (t) => {
        const fixture = F.containers.kontainerbc23
        const res = await app.inject({
          url: routeUrl(hub, 'kontainerbc23', { blNo: fixture.noBl, blDate: iso(fixture.tglBl) })
        })
        t.match(res.json().data[0].containerType, /^(DRY|HIGH CUBE|REEFER|OPEN TOP)$/)
        t.equal(res.json().data[0].isoSizeTypeCode, undefined)
      }
    )

    check('BL list routes answer each document type\'s list, normalized', async (t) => {
      for (const type of ['bc16', 'bc20', 'bc23'] as const) {
        const res = await app.inject({
          url: `/v1/customs/${type}/bills-of-lading?npwp=${F.taxpayer.npwp}`
        })
        t.equal(res.statusCode, 200, type)
        const body = res.json()
        const expected = F.taxpayer[type]
        t.equal(body.meta.count, expected.length, `${type} count`)
        t.same(
          body.data.map((d: { blNo: string }) => d.blNo),
          expected.map((bl) => bl.blNo),
          `${type} BL numbers`
        )
        for (const [i, entry] of body.data.entries()) {
          t.equal(entry.blDate, expected[i]?.blDate, `${type} blDate is the day, YYYY-MM-DD`)
          if (dayOnly(hub)) {
            t.equal(entry.blDateTime, undefined, `${type}: no time of day the hub did not say`)
            continue
          }
          t.match(entry.blDateTime, ISO_DATE_TIME, `${type} blDateTime is ISO with offset`)
          t.equal(
            entry.blDateTime,
            `${expected[i]?.blDateStamped.replace(' ', 'T')}+07:00`,
            `${type} blDateTime keeps the hub's time of day`
          )
        }
      }
    })

    check(
      'blDate has one form on every route: an item of one answer is the next request',
      async (t) => {
        const list = (
          await app.inject({ url: `/v1/customs/bc20/bills-of-lading?npwp=${F.sp2.npwp}` })
        ).json()
        const entry = list.data.find((d: { blNo: string }) => d.blNo === F.sp2.blNo)
        t.match(entry.blDate, ISO_DATE)
        const documents = await app.inject({
          url: routeUrl(hub, 'document_sp2/host-to-host', {
            npwp: F.sp2.npwp,
            blNo: entry.blNo,
            blDate: entry.blDate
          })
        })
        t.equal(documents.statusCode, 200, "the BL list's blDate is what the SP2 lookup takes")
        t.ok(documents.json().meta.count > 0, 'and finds the documents')
        t.equal(
          documents.json().data[0].customsDocument.blDate,
          entry.blDate,
          'the same value in the SP2 document'
        )

        // A BL stamped early in the morning: in UTC it is the day before; blDate is the hub's day.
        const early = F.taxpayer.bc16.find((bl) => Number(bl.blDateStamped.slice(11, 13)) < 7)
        t.ok(early, 'the sandbox seeds an early-morning stamp')
        const bc16 = (
          await app.inject({ url: `/v1/customs/bc16/bills-of-lading?npwp=${F.taxpayer.npwp}` })
        ).json()
        const item = bc16.data.find((d: { blNo: string }) => d.blNo === early?.blNo)
        t.equal(item.blDate, early?.blDate)
        if (!dayOnly(hub)) {
          t.not(
            new Date(item.blDateTime).toISOString().slice(0, 10),
            item.blDate,
            'cut from the date-time in UTC it would be another day'
          )
        }
      }
    )

    check('NPWP is accepted with dots and dashes and as 16 digits', async (t) => {
      const printed = `${F.taxpayer.npwp.slice(0, 2)}.${F.taxpayer.npwp.slice(2, 5)}.` +
        `${F.taxpayer.npwp.slice(5, 8)}.${F.taxpayer.npwp.slice(8, 9)}-` +
        `${F.taxpayer.npwp.slice(9, 12)}.${F.taxpayer.npwp.slice(12)}`
      const res = await app.inject({
        url: `/v1/customs/bc20/bills-of-lading?npwp=${encodeURIComponent(printed)}`
      })
      t.equal(res.statusCode, 200)
      t.equal(res.json().meta.count, F.taxpayer.bc20.length)
      t.equal(last()?.values.npwp, F.taxpayer.npwp, 'sent upstream without punctuation')

      const sixteen = await app.inject({
        url: `/v1/customs/bc23/bills-of-lading?npwp=${F.taxpayer16.npwp}`
      })
      t.equal(sixteen.statusCode, 200)
      t.equal(sixteen.json().meta.count, F.taxpayer16.bc23.length)
    })

    check('an empty upstream list is a 200 with data []', async (t) => {
      const res = await app.inject({
        url: `/v1/customs/bc16/bills-of-lading?npwp=${F.taxpayerWithoutBc16.npwp}`
      })
      t.equal(res.statusCode, 200)
      t.same(res.json(), { data: [], meta: { count: 0, cached: false } })
    })

    check('taxpayer route merges the three BL lists, tagged by document type', async (t) => {
      const res = await app.inject({ url: `/v1/taxpayers/${F.taxpayer.npwp}/bills-of-lading` })
      t.equal(res.statusCode, 200)
      const body = res.json()
      const total = F.taxpayer.bc16.length + F.taxpayer.bc20.length + F.taxpayer.bc23.length
      t.equal(body.meta.count, total)
      t.equal(body.meta.complete, true)
      t.same(body.meta.sources.map((s: { status: string }) => s.status), ['ok', 'ok', 'ok'])
      t.same(
        body.data
          .filter((d: { documentType: string }) => d.documentType === 'bc23')
          .map((d: { blNo: string }) => d.blNo),
        F.taxpayer.bc23.map((bl) => bl.blNo)
      )
      t.same(
        new Set(sandbox.requests.map((r) => r.operation)),
        new Set(['noblbc16', 'noblbc20', 'noblbc23']),
        'asked all three'
      )
    })

    check('taxpayer route answers the error when every source fails', async (t) => {
      const res = await app.inject({ url: '/v1/taxpayers/990000000000500/bills-of-lading' })
      t.equal(res.statusCode, 502)
      t.equal(res.json().code, 'UPSTREAM_UNAVAILABLE')
    })

    check('BC 2.0 declaration by PIB number', async (t) => {
      const res = await app.inject({
        url: routeUrl(hub, 'BC20ByNoPib', { pibNo: F.declaration.pibNo, npwp: F.declaration.npwp })
      })
      t.equal(res.statusCode, 200, res.body)
      const { data, meta } = res.json()
      t.same(meta, { cached: false })
      t.equal(data.pibNo, F.declaration.pibNo)
      t.equal(data.hostBlNo, F.declaration.blNo)
      t.equal(data.cargoOwnerNpwp, F.declaration.npwp)
      for (const name of ['pibDate', 'sppbDate', 'blDate']) {
        t.match(data[name], ISO_DATE, `${name} is the day`)
        if (dayOnly(hub)) {
          t.equal(data[`${name}Time`], undefined, `${name}Time: no time the hub did not say`)
          continue
        }
        t.match(data[`${name}Time`], ISO_DATE_TIME, `${name}Time keeps the time of day`)
        t.equal(data[`${name}Time`].slice(0, 10), data[name])
      }
      t.equal(data.blDate, F.declaration.blDate)
      t.same(last()?.values, { npwp: F.declaration.npwp, pibNo: F.declaration.pibNo })

      const missing = await app.inject({
        url: routeUrl(hub, 'BC20ByNoPib', { pibNo: F.unknownPibNo, npwp: F.declaration.npwp })
      })
      t.equal(missing.statusCode, 404)
      t.equal(missing.json().code, 'UPSTREAM_NOT_FOUND')
      t.type(missing.json().upstreamMessage, 'string', 'the hub\'s own message is passed on')
    })

    check('BC 2.0 declarations by bill of lading answer a list', async (t) => {
      const res = await app.inject({
        url: routeUrl(hub, 'BC20ByNoBL', {
          blNo: F.declaration.blNo,
          npwp: F.declaration.npwp,
          blDate: F.declaration.blDate
        })
      })
      t.equal(res.statusCode, 200, res.body)
      const body = res.json()
      t.equal(body.meta.count, F.blWithTwoDeclarations.pibNos.length)
      t.same(
        body.data.map((d: { pibNo: string }) => d.pibNo).sort(),
        [...F.blWithTwoDeclarations.pibNos].sort()
      )
      const sent = Object.keys(last()?.headers ?? {})
      t.same(
        keyHeaders(hub, 'noblbc20').filter((name) => sent.includes(name)),
        [],
        'BC20ByNoBL sends only the token'
      )
    })

    for (const op of operationsOf('container-list')) {
      check(
        `containers of ${op.documentType.code} come back under data whatever the hub's key`,
        async (t) => {
          const fixture = F.containers[op.id]
          const blDate = iso(fixture.tglBl)
          const res = await app.inject({
            url: routeUrl(hub, op.id, { blNo: fixture.noBl, blDate })
          })
          t.equal(res.statusCode, 200, res.body)
          const body = res.json()
          const takes = new Set(paramsOf(hub.profile, op.id).map(([name]) => name))
          const numbers = body.data.map((c: { containerNo: string }) => c.containerNo)
          if (takes.size === op.params.length) t.same(numbers, fixture.containerNos)
          else {
            t.ok(
              numbers.length > 0 && numbers.every((n: string) => fixture.containerNos.includes(n)),
              "the BL's containers of that date"
            )
          }
          t.equal(body.meta.count, numbers.length)
          for (const item of body.data) {
            t.type(item.containerSize, 'string')
            t.match(item.blDate, ISO_DATE)
          }
          const sent = last()
          t.equal(sent?.operation, op.id)
          if (takes.has('blDate')) {
            t.equal(
              sent?.values.blDate,
              sentDate(hub, op.id, blDate),
              "the date sent in the hub's form"
            )
          }
          if (takes.has('blNo')) t.equal(sent?.values.blNo, fixture.noBl)
        }
      )
    }

    check('SP2 documents are normalized all the way down', async (t) => {
      const res = await app.inject({ url: sp2Url })
      t.equal(res.statusCode, 200, res.body)
      const { data, meta } = res.json()
      t.equal(meta.count, F.sp2.documentIds.length)
      t.same(data.map((d: { sp2Id: string }) => d.sp2Id), F.sp2.documentIds)
      const doc = data[0]
      t.match(doc.requestedAt, ISO_DATE_TIME)
      t.match(doc.paidThroughDate, ISO_DATE)
      t.type(doc.finished, 'boolean')
      t.type(doc.containerCount, 'number')
      t.type(doc.price, 'number')
      t.equal(doc.customsDocumentId, F.sp2.idDocument)
      t.equal(doc.customsDocument.documentId, F.sp2.idDocument)
      t.type(doc.customsDocument.deliveryOrderFinished, 'boolean')
      t.type(doc.customsDocument.documentTypeDetails.processType.processName, 'string')
      t.type(doc.customsDocument.users[0].isCustomsBroker, 'boolean')
      t.type(doc.platform.name, 'string')
      t.match(doc.platform.publishedAt, ISO_DATE_TIME)
      t.match(
        doc.platform.services,
        [{ serviceId: Number, serviceName: String }],
        'platform services in our names'
      )
      t.match(
        doc.containers[0].isoSizeTypeCode,
        /^[0-9]{2}[A-Z][0-9]$/,
        'the ISO size-type code has a name of its own'
      )
      t.equal(doc.containers[0].containerType, undefined, 'not the customs lists\' containerType')
      t.ok(doc.containers.some((c: { containerNo: string }) => c.containerNo === F.sp2.containerNo))
      t.match(doc.logs[0].createdAt, ISO_DATE_TIME)
      const keys = keysOf(data)
      t.same(keys.filter(k => !/^[a-z][A-Za-z0-9]*$/.test(k)), [], 'every key is camelCase')
      const gatePasses = data.flatMap((d: { containers: Array<{ gatePass: unknown }> }) =>
        d.containers.map((c) => c.gatePass)
      )
      t.notOk(gatePasses.includes(''), 'an empty gate pass is answered as null')
      t.ok(gatePasses.includes(null), 'and there is one')
      t.same(last()?.values, {
        npwp: F.sp2.npwp,
        blNo: F.sp2.blNo,
        blDate: sentDate(hub, 'document_sp2/host-to-host', F.sp2.blDate)
      })
    })

    check('SP2 containers of a cargo owner', async (t) => {
      const res = await app.inject({
        url: routeUrl(hub, 'document_sp2_container/cargo_owner', {
          npwp: F.sp2.npwp,
          blNo: F.sp2.blNo,
          blDate: F.sp2.blDate,
          containerNo: F.sp2.containerNo.toLowerCase()
        })
      })
      t.equal(res.statusCode, 200, res.body)
      const { data } = res.json()
      t.ok(data.length >= 1)
      t.equal(data[0].containerNo, F.sp2.containerNo)
      t.ok(F.sp2.documentIds.includes(data[0].sp2Id))
      t.equal(last()?.values.containerNo, F.sp2.containerNo, 'sent upper-case')
    })

    check('SP2 finalization posts the id and answers in the API\'s words', async (t) => {
      const res = await app.inject({
        method: 'POST',
        url: `/v1/sp2/documents/${F.sp2.sp2Id}/finalization`
      })
      t.equal(res.statusCode, 200, res.body)
      t.same(
        res.json().data,
        {
          sp2Id: F.sp2.sp2Id,
          finished: true,
          status: 'Finish',
          upstreamMessage: 'SP2 document finalized'
        },
        "booleans, our names, the hub's text in upstreamMessage"
      )
      const sent = last()
      t.equal(
        sent?.values.sp2Id ??
          (sent?.body as { id_document_sp2?: string } | undefined)?.id_document_sp2,
        F.sp2.sp2Id,
        'the document named where the hub reads it'
      )

      const missing = await app.inject({
        method: 'POST',
        url: `/v1/sp2/documents/${F.unknownSp2Id}/finalization`
      })
      t.equal(missing.statusCode, 404)
      t.equal(missing.json().code, 'UPSTREAM_NOT_FOUND')
    })

    check('an offer goes upstream with the platform id, local times and a timestamp', async (t) => {
      const res = await app.inject({
        method: 'POST',
        url: `/v1/bookings/${F.bookingRequestId}/offers`,
        payload: { serviceOrderId: 'SO-7', price: 1250000.5, offeredAt: '2024-03-01T01:15:00Z' }
      })
      t.equal(res.statusCode, 200, res.body)
      t.same(
        res.json().data,
        {
          bookingRequestId: F.bookingRequestId,
          serviceOrderId: 'SO-7',
          price: 1250000.5,
          offeredAt: '2024-03-01T08:15:00+07:00',
          upstreamMessage: 'Penawaran berhasil dikirim'
        },
        "the offer as the hub accepted it, in our names; offeredAt in the hub's local time"
      )
      const sent = last()?.body as Record<string, unknown>
      t.equal(sent.idRequestBooking, F.bookingRequestId)
      t.equal(sent.idPlatform, F.platformId)
      t.equal(sent.idServiceOrder, 'SO-7')
      t.equal(sent.hargaPenawaran, 1250000.5)
      t.equal(sent.waktuPenawaran, '2024-03-01 08:15:00', 'shifted into the hub\'s +07:00')
      t.match(sent.timestamp, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/)
    })

    check('a booked notification goes upstream as isBooked/booking_note', async (t) => {
      const res = await app.inject({
        method: 'POST',
        url: `/v1/bookings/${F.bookingRequestId}/booked`,
        payload: { booked: true, note: 'Truck B 1234 XYZ' }
      })
      t.equal(res.statusCode, 200, res.body)
      const sent = last()
      t.same(sent?.body, { isBooked: 1, booking_note: 'Truck B 1234 XYZ' })
      t.equal(sent?.values.bookingRequestId, F.bookingRequestId)
    })
  })
}
