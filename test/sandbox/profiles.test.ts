import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import type { Test } from 'tap'
import { OPERATIONS } from '../../src/catalogue/operations.ts'
import {
  SANDBOX_ACCESS_TOKEN,
  SANDBOX_API_KEY,
  SANDBOX_FIXTURES as F,
  SANDBOX_LOGIN_PATH,
  SANDBOX_PASSWORD,
  SANDBOX_USERNAME,
  magicValue,
  startSandbox
} from '../../src/sandbox/index.ts'
import type { Sandbox } from '../../src/sandbox/index.ts'
import { call, isRecord, sandbox } from './helpers.ts'
import type { Reply } from './helpers.ts'
import { loginOf, playProblems } from '../../src/sandbox/profile-file.ts'
import {
  PROFILE_FILES,
  dataOf,
  hubRequest,
  paramsOf,
  profileJson,
  setting
} from '../helpers/hub-profiles.ts'
import type { HubRequest, ProfileJson, ProfileName } from '../helpers/hub-profiles.ts'

// The sandbox playing each hub profile, over raw HTTP: the two shipped
// profiles and one neither of them fits (test/fixtures/profiles/).

const NAMES = Object.keys(PROFILE_FILES) as ProfileName[]
const KEY_REFUSED = 'API key is not valid or is expired / revoked.'
const WENT_WRONG = 'Something went wrong. Please try again later.'

const iso = (compact: string) => `${compact.slice(0, 4)}-${compact.slice(4, 6)}-${compact.slice(6)}`

/** Values (by the gateway's names) that find data in every operation. */
function valuesFor (id: string): Record<string, string> {
  const container = (F.containers as Record<string, { noBl: string; tglBl: string } | undefined>)[
    id
  ]
  if (container !== undefined) return { blNo: container.noBl, blDate: iso(container.tglBl) }
  if (id.startsWith('noblbc')) return { npwp: F.taxpayer.npwp }
  if (id === 'BC20ByNoPib') return { npwp: F.declaration.npwp, pibNo: F.declaration.pibNo }
  if (id === 'BC20ByNoBL') {
    return { npwp: F.declaration.npwp, blNo: F.declaration.blNo, blDate: F.declaration.blDate }
  }
  if (id === 'document_sp2/final') return { sp2Id: F.sp2.sp2Id }
  if (id.startsWith('DetilBooking')) return { bookingRequestId: F.bookingRequestId }
  return {
    npwp: F.sp2.npwp,
    blNo: F.sp2.blNo,
    blDate: F.sp2.blDate,
    containerNo: F.sp2.containerNo
  }
}

const BODIES: Record<string, unknown> = {
  'document_sp2/final': { id_document_sp2: F.sp2.sp2Id },
  DetilBooking: {
    idRequestBooking: F.bookingRequestId,
    idPlatform: F.platformId,
    idServiceOrder: 'SO-1',
    hargaPenawaran: 1500000,
    waktuPenawaran: '2024-03-01 08:15:00',
    timestamp: '2024-03-01 08:15:02'
  },
  'DetilBooking/isBooked': { isBooked: 1, booking_note: '' }
}

function requestFor (
  profile: ProfileJson,
  id: string,
  options: { keyHeader?: string; values?: Record<string, string> } = {}
): HubRequest {
  return hubRequest(
    profile,
    id,
    { ...valuesFor(id), ...options.values },
    { ...options, body: BODIES[id] }
  )
}

function send (
  sb: Sandbox,
  request: HubRequest,
  headers: Record<string, string> = request.headers
): Promise<Reply> {
  return call(sb, request.method, request.path, {
    headers,
    ...(request.body === undefined ? {} : { body: request.body })
  })
}

async function played (t: Test, name: ProfileName): Promise<Sandbox> {
  return sandbox(t, { profile: PROFILE_FILES[name] })
}

/** The day of a stamped date in the form the profile answers. */
function answered (profile: ProfileJson, stamped: string): string {
  const form = profile.defaults?.dateAnswered ?? 'YYYY-MM-DD HH:MM:SS.S'
  if (form === 'YYYY-MM-DD HH:MM:SS.S') return stamped
  return form === 'YYYY-MM-DD' ? stamped.slice(0, 10) : stamped.slice(0, 10).replaceAll('-', '')
}

/** What the data of each operation must hold, the answer having been found under its key. */
function checkData (t: Test, profile: ProfileJson, id: string, data: unknown): void {
  const records = Array.isArray(data) ? data.filter(isRecord) : []
  if (id.startsWith('noblbc')) {
    const type = id.slice(4) as 'bc16' | 'bc20' | 'bc23'
    t.strictSame(
      records.map((r) => r.bl_no),
      F.taxpayer[type].map((bl) => bl.blNo),
      `${id}: the taxpayer's BLs`
    )
    t.strictSame(
      records.map((r) => r.bl_date),
      F.taxpayer[type].map((bl) => answered(profile, bl.blDateStamped)),
      `${id}: their dates as the profile answers them`
    )
  } else if (id.startsWith('kontainer')) {
    const fixture = F.containers[id as keyof typeof F.containers]
    const takesBl = paramsOf(profile, id).some(([name]) => name === 'blNo')
    t.ok(records.length > 0, `${id}: containers`)
    t.ok(
      records.every(
        (r) =>
          fixture.containerNos.includes(String(r.no_kontainer)) &&
          (!takesBl || r.no_bl === fixture.noBl)
      ),
      `${id}: those of the BL (and date) asked for`
    )
  } else if (id === 'BC20ByNoPib') {
    t.ok(
      isRecord(data) && data.no_pib === F.declaration.pibNo && data.host_bl === F.declaration.blNo,
      `${id}: the declaration`
    )
  } else if (id === 'BC20ByNoBL') {
    t.strictSame(
      records.map((r) => r.no_pib).sort(),
      [...F.blWithTwoDeclarations.pibNos].sort(),
      `${id}: the BL's declarations`
    )
  } else if (id === 'document_sp2/host-to-host') {
    t.strictSame(
      records.map((r) => r.id_document_sp2),
      F.sp2.documentIds,
      `${id}: the BL's SP2 documents`
    )
  } else if (id === 'document_sp2_container/cargo_owner') {
    t.ok(
      records.length > 0 && records.every((r) => r.container_no === F.sp2.containerNo),
      `${id}: the container`
    )
  } else {
    t.ok(isRecord(data) && typeof data.message === 'string', `${id}: the write's answer`)
  }
}

for (const name of NAMES) {
  t.test(
    `${name}: every operation answers at the address the profile gives it, with its data`,
    async (t) => {
      const profile = profileJson(name)
      const sb = await played(t, name)
      t.equal(sb.profile, profile.name)
      for (const op of OPERATIONS) {
        const request = requestFor(profile, op.id)
        const res = await send(sb, request)
        t.equal(
          res.status,
          200,
          `${op.id}: ${request.method} ${request.path}: ${res.text.slice(0, 200)}`
        )
        checkData(t, profile, op.id, dataOf(profile, op.id, res.body))
        const recorded = sb.requests.at(-1)
        t.equal(recorded?.operation, op.id)
        const dateSent = setting(profile, op.id, 'dateSent') ?? 'YYYYMMDD'
        t.strictSame(
          recorded?.values,
          Object.fromEntries(
            paramsOf(profile, op.id).map(([kind]) => {
              const value = valuesFor(op.id)[kind] ?? ''
              return [
                kind,
                kind === 'blDate' && dateSent === 'YYYYMMDD' ? value.replaceAll('-', '') : value
              ]
            })
          ),
          `${op.id}: the values recorded by what they mean`
        )
      }
    }
  )
}

t.test(
  'a parameter out of its place is refused: another order, the query string for a path segment, ' +
  'the reverse',
  async (t) => {
    const other = profileJson('other-hub')
    const sb = await played(t, 'other-hub')
    const swapped = await call(
      sb,
      'GET',
      `/NLE-DEV/ceisa/v2/BC20ByNoPib/${F.declaration.npwp}/${F.declaration.pibNo}`,
      { headers: { key: SANDBOX_API_KEY, authentication: SANDBOX_ACCESS_TOKEN } }
    )
    t.equal(swapped.status, 404, 'BC20ByNoPib takes the PIB first')
    t.strictSame(
      swapped.body,
      { error: 'Data tidak ditemukan' },
      "an operation's error in the profile's last error field"
    )
    const dateFirst = await send(sb, requestFor(other, 'kontainerbc20'))
    t.equal(dateFirst.status, 200)
    const blFirst = await call(
      sb,
      'GET',
      `/NLE-DEV/ceisa/v2/kontainerbc20All/${F.containers.kontainerbc20.noBl}/` +
      `${iso(F.containers.kontainerbc20.tglBl)}`,
      { headers: { key: SANDBOX_API_KEY, authentication: SANDBOX_ACCESS_TOKEN } }
    )
    t.equal(blFirst.status, 400)
    t.strictSame(blFirst.body, { error: 'Parameter tglBl harus berformat YYYY-MM-DD' })
    const inQuery = await call(sb, 'GET', `/NLE-DEV/ceisa/v2/noblbc23/?npwp=${F.taxpayer.npwp}`, {
      headers: { key: SANDBOX_API_KEY, authentication: SANDBOX_ACCESS_TOKEN }
    })
    t.equal(inQuery.status, 404, 'noblbc23 takes the taxpayer in the path')
    t.strictSame(inQuery.body, { error: 'Not Found' })
    const inPath = await call(sb, 'GET', `/NLE-DEV/ceisa/v2/noblbc20/${F.taxpayer.npwp}`, {
      headers: { key: SANDBOX_API_KEY, authentication: SANDBOX_ACCESS_TOKEN }
    })
    t.equal(inPath.status, 404, 'noblbc20 takes it in the query string')
    const mixed = await call(
      sb,
      'GET',
      `/NLE-DEV/ceisa/v2/kontainerbc30/${F.containers.kontainerbc30.noBl}`,
      { headers: { key: SANDBOX_API_KEY, authentication: SANDBOX_ACCESS_TOKEN } }
    )
    t.equal(mixed.status, 400, 'kontainerbc30: the BL in the path, its date in the query string')
    t.strictSame(mixed.body, { error: 'Parameter tglBl wajib diisi' })

    const callers = profileJson('public-callers')
    const pc = await played(t, 'public-callers')
    const headers = requestFor(callers, 'kontainerbc23').headers
    const query = await call(
      pc,
      'GET',
      `/V1/NLE/INT/AUTH/kontainerbc23/?noBl=${F.containers.kontainerbc23.noBl}&tglBl=` +
      `${F.containers.kontainerbc23.tglBl}`,
      { headers }
    )
    t.equal(query.status, 404, 'public callers send container lists as path segments')
    const booked = requestFor(callers, 'DetilBooking/isBooked')
    t.match(
      booked.path,
      /\/DetilBooking\/isBooked\/\?idRequestBooking=/,
      'the booked notification keeps its query string'
    )
    const segment = await call(
      pc,
      'POST',
      `/nletrucking/v1/DetilBooking/isBooked/${F.bookingRequestId}`,
      { headers: booked.headers, body: BODIES['DetilBooking/isBooked'] }
    )
    t.equal(segment.status, 404)
  }
)

t.test(
  "only the profile's prefixes: the documented and production addresses are unknown",
  async (t) => {
    for (const name of ['public-callers', 'other-hub'] as const) {
      const sb = await played(t, name)
      const profile = profileJson(name)
      for (const op of OPERATIONS) {
        const documented = hubRequest(profileJson('documented'), op.id, valuesFor(op.id), {
          body: BODIES[op.id]
        })
        const res = await send(sb, documented, requestFor(profile, op.id).headers)
        t.equal(res.status, 404, `${name} ${op.id}: ${documented.path}`)
      }
    }
    const documented = await played(t, 'documented')
    const res = await call(
      documented,
      'GET',
      `/V3/HUB/document_sp2/host-to-host/?npwp_cargo_owner=${F.sp2.npwp}&bl_no=` +
      `${F.sp2.blNo}&bl_date=${F.sp2.blDateCompact}`,
      { headers: { 'customs-api-key': SANDBOX_API_KEY, authorization: SANDBOX_ACCESS_TOKEN } }
    )
    t.equal(res.status, 404, 'the documented profile names the development prefix only')
  }
)

t.test(
  'the API key only under a name the profile gives it, each one accepted; the token in its own ' +
  'header',
  async (t) => {
    const callers = profileJson('public-callers')
    const pc = await played(t, 'public-callers')
    const lookup = requestFor(callers, 'noblbc20')
    t.strictSame(Object.keys(lookup.headers), ['beacukai-api-key', 'Authorization'])
    for (const wrong of ['customs-api-key', 'nle-api-key', 'key']) {
      const res = await send(pc, lookup, {
        [wrong]: SANDBOX_API_KEY,
        authorization: SANDBOX_ACCESS_TOKEN
      })
      t.equal(res.status, 403, `${wrong} is not this hub's name for it`)
      t.strictSame(res.body, { error: KEY_REFUSED }, 'refused as the real hub refuses a key')
    }
    t.equal(
      (
        await send(pc, lookup, {
          'beacukai-api-key': 'sbx-other-key',
          authorization: SANDBOX_ACCESS_TOKEN
        })
      ).status,
      403,
      'a wrong key under the right name'
    )
    t.equal((await send(pc, lookup)).status, 200)
    for (const right of ['nle-api-key', 'beacukai-api-key']) {
      t.equal(
        (await send(pc, requestFor(callers, 'DetilBooking', { keyHeader: right }))).status,
        200,
        `the offer takes the key as ${right}`
      )
    }
    t.equal(
      (await send(pc, requestFor(callers, 'DetilBooking', { keyHeader: 'customs-api-key' })))
        .status,
      403
    )
    t.equal(
      (
        await send(
          pc,
          requestFor(callers, 'document_sp2/host-to-host', { keyHeader: 'beacukai-api-key' })
        )
      ).status,
      403,
      'SP2 calls take nle-api-key'
    )

    const other = profileJson('other-hub')
    const oh = await played(t, 'other-hub')
    const list = requestFor(other, 'noblbc16')
    t.strictSame(list.headers, { key: SANDBOX_API_KEY, Authentication: SANDBOX_ACCESS_TOKEN })
    const inAuthorization = await send(oh, list, {
      key: SANDBOX_API_KEY,
      authorization: SANDBOX_ACCESS_TOKEN
    })
    t.equal(inAuthorization.status, 401, 'the token in Authorization is no token to this hub')
    t.strictSame(
      inAuthorization.body,
      { fault: { text: 'Unauthorized' } },
      "a credential's refusal in the first error field (a dotted path)"
    )
    t.equal((await send(oh, list)).status, 200)
    for (const right of ['customs-api-key', 'key']) {
      t.equal(
        (await send(oh, requestFor(other, 'DetilBooking', { keyHeader: right }))).status,
        200,
        `the offer takes ${right}`
      )
    }
  }
)

t.test(
  "a token the login issued goes after the profile's scheme; the static token as it is",
  async (t) => {
    const sb = await played(t, 'other-hub')
    const login = await call(sb, 'POST', '/oauth/token', {
      body: { username: SANDBOX_USERNAME, password: SANDBOX_PASSWORD }
    })
    t.equal(login.status, 200)
    const token = (login.body as { access_token: string }).access_token
    const request = requestFor(profileJson('other-hub'), 'noblbc16')
    const as = async (value: string) =>
      (await send(sb, request, { key: SANDBOX_API_KEY, authentication: value })).status
    t.equal(await as(`Bearer ${token}`), 200)
    t.equal(await as(`bearer ${token}`), 200, 'the scheme without letter case, as HTTP has it')
    t.equal(await as(token), 401, 'not without its scheme')
    t.equal(await as(`Token ${token}`), 401, 'nor after another')
    t.equal(await as(`Bearer ${token} x`), 401)
    t.equal(await as(SANDBOX_ACCESS_TOKEN), 200)

    const bare = await sandbox(t, { profile: { name: 'bare-token', tokenScheme: '' } })
    const issued = (
      (
        await call(bare, 'POST', SANDBOX_LOGIN_PATH, {
          body: { username: SANDBOX_USERNAME, password: SANDBOX_PASSWORD }
        })
      ).body as { access_token: string }
    ).access_token
    const path = `/V1/HUB/INT/AUTH/noblbc16/?npwp=${F.taxpayer.npwp}`
    t.equal(
      (
        await call(bare, 'GET', path, {
          headers: { 'customs-api-key': SANDBOX_API_KEY, authorization: issued }
        })
      ).status,
      200,
      'an empty scheme: the token alone'
    )
    t.equal(
      (
        await call(bare, 'GET', path, {
          headers: { 'customs-api-key': SANDBOX_API_KEY, authorization: `Bearer ${issued}` }
        })
      ).status,
      401
    )
  }
)

t.test(
  'dates are taken in the form the profile sends them, and answered in the form it answers them',
  async (t) => {
    const other = profileJson('other-hub')
    const oh = await played(t, 'other-hub')
    const headers = requestFor(other, 'kontainerbc25').headers
    const compact = await call(
      oh,
      'GET',
      `/NLE-DEV/ceisa/v2/kontainerbc25/${F.containers.kontainerbc25.tglBl}`,
      { headers }
    )
    t.equal(compact.status, 400)
    t.strictSame(compact.body, { error: 'Parameter tglBl harus berformat YYYY-MM-DD' })
    const pibs = await send(oh, requestFor(other, 'BC20ByNoPib'))
    const declaration = pibs.body as Record<string, string>
    for (const field of ['tgl_bl', 'tgl_pib', 'tgl_sppb']) {
      t.match(declaration[field], /^\d{8}$/, `${field} ` + 'as YYYYMMDD')
    }

    const callers = profileJson('public-callers')
    const pc = await played(t, 'public-callers')
    const dashed = await call(
      pc,
      'GET',
      `/V1/NLE/INT/AUTH/kontainerbc25/${iso(F.containers.kontainerbc25.tglBl)}`,
      { headers: requestFor(callers, 'kontainerbc25').headers }
    )
    t.equal(dashed.status, 400)
    t.strictSame(dashed.body, { message: 'Parameter tglBl harus berformat YYYYMMDD' })
    const record = (await send(pc, requestFor(callers, 'BC20ByNoPib'))).body as Record<
      string,
      string
    >
    for (const field of ['tgl_bl', 'tgl_pib', 'tgl_sppb']) {
      t.match(record[field], /^\d{4}-\d{2}-\d{2}$/, `${field} ` + 'as YYYY-MM-DD')
    }
    const sp2 = (await send(pc, requestFor(callers, 'document_sp2/host-to-host'))).body as Array<
      Record<string, string>
    >
    t.match(
      sp2[0]?.request_date,
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/,
      'dates answered without the stamp keep their form'
    )
  }
)

/** Every leaf of a JSON value. */
function leaves (value: unknown): unknown[] {
  if (Array.isArray(value)) return value.flatMap(leaves)
  if (isRecord(value)) return Object.values(value).flatMap(leaves)
  return [value]
}

/**
 * The tests' reading of a hub that stringifies: numbers as their JSON text, null as the null
 * string.
 */
function stringified (value: unknown, nullString: string): unknown {
  if (Array.isArray(value)) return value.map(v => stringified(v, nullString))
  if (isRecord(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, stringified(v, nullString)])
    )
  }
  return value === null ? nullString : String(value)
}

t.test(
  'values: every one a string and null as "null" (public callers); null as "" and numbers as ' +
  'numbers (other hub)',
  async (t) => {
    const plain = await sandbox(t)
    const documented = profileJson('documented')
    const values = {
      npwp: F.benchmark.twenty.npwp,
      blNo: F.benchmark.twenty.blNo,
      blDate: F.benchmark.twenty.blDate
    }
    const reference = (
      await send(plain, hubRequest(documented, 'document_sp2/host-to-host', values))
    ).body
    t.ok(
      leaves(reference).includes(null) && leaves(reference).some((v) => typeof v === 'number'),
      'the documents hold nulls and numbers'
    )

    const callers = profileJson('public-callers')
    const pc = await played(t, 'public-callers')
    const strings = (await send(pc, hubRequest(callers, 'document_sp2/host-to-host', values))).body
    t.strictSame(
      strings,
      stringified(reference, 'null'),
      'the same documents, every value a string'
    )
    const booked = await send(pc, requestFor(callers, 'DetilBooking/isBooked'))
    t.strictSame(
      booked.body,
      {
        message: 'Booking berhasil diperbarui',
        idRequestBooking: F.bookingRequestId,
        isBooked: '1'
      },
      'writes answer strings too'
    )

    const other = profileJson('other-hub')
    const oh = await played(t, 'other-hub')
    const answer = (await send(oh, hubRequest(other, 'document_sp2/host-to-host', values)))
      .body as { data: unknown; result: string }
    t.equal(
      answer.result,
      'Ok',
      "a list answer carries the status member, as the profile's success word"
    )
    t.notOk(leaves(answer.data).includes(null), 'no null')
    t.equal(
      leaves(answer.data).filter((v) => v === '').length,
      leaves(reference).filter((v) => v === null || v === '').length,
      'each null an empty string'
    )
    t.strictSame(
      leaves(answer.data).filter((v) => typeof v === 'number'),
      leaves(reference).filter((v) => typeof v === 'number'),
      'numbers stay numbers'
    )

    const big = {
      npwp: F.benchmark.fiveHundred.npwp,
      blNo: F.benchmark.fiveHundred.blNo,
      blDate: F.benchmark.fiveHundred.blDate
    }
    const first = await send(pc, hubRequest(callers, 'document_sp2/host-to-host', big))
    const again = await send(pc, hubRequest(callers, 'document_sp2/host-to-host', big))
    t.equal((first.body as unknown[]).length, 500)
    t.equal(again.text, first.text, 'a large answer is rewritten once, the same every time')
  }
)

t.test(
  "answer keys: the profile's member, or the sandbox's own under `*`; a record stays itself",
  async (t) => {
    const other = profileJson('other-hub')
    const oh = await played(t, 'other-hub')
    const keysOf = async (id: string) =>
      Object.keys((await send(oh, requestFor(other, id))).body as object)
    t.strictSame(await keysOf('noblbc20'), ['data', 'result'])
    t.strictSame(
      await keysOf('document_sp2/host-to-host'),
      ['data', 'result'],
      'an array answer under the key'
    )
    t.strictSame(
      await keysOf('kontainersp3b'),
      ['Data Kontainer SP3B', 'result'],
      "`*`: the sandbox's own key, the only array"
    )
    t.ok((await keysOf('BC20ByNoPib')).includes('no_pib'), 'the record itself')

    const callers = profileJson('public-callers')
    const pc = await played(t, 'public-callers')
    t.strictSame(Object.keys((await send(pc, requestFor(callers, 'noblbc16'))).body as object), [
      'Data BL BC 1.6',
      'status'
    ])
    t.equal(
      ((await send(pc, requestFor(callers, 'noblbc16'))).body as { status: string }).status,
      'Success.'
    )
    t.ok(
      Array.isArray((await send(pc, requestFor(callers, 'document_sp2/host-to-host'))).body),
      'an array answer stays one'
    )

    const wrapped = await sandbox(t, {
      profile: { name: 'wrapped', operations: { BC20ByNoPib: { answerKey: 'item' } } }
    })
    const record = await call(
      wrapped,
      'GET',
      `/V1/HUB/INT/AUTH/BC20ByNoPib/?npwp=${F.declaration.npwp}&nopib=${F.declaration.pibNo}`,
      { headers: { 'customs-api-key': SANDBOX_API_KEY, authorization: SANDBOX_ACCESS_TOKEN } }
    )
    t.match(
      record.body,
      { item: { no_pib: F.declaration.pibNo } },
      "a record under its operation's key"
    )
    const empty = await call(
      wrapped,
      'GET',
      `/V1/HUB/INT/AUTH/BC20ByNoPib/?npwp=${F.declaration.npwp}&nopib=SBX-EMPTY`,
      { headers: { 'customs-api-key': SANDBOX_API_KEY, authorization: SANDBOX_ACCESS_TOKEN } }
    )
    t.strictSame(empty.body, { item: {} }, 'EMPTY keeps the form')
    const drift = await call(
      wrapped,
      'GET',
      `/V1/HUB/INT/AUTH/BC20ByNoPib/?npwp=${F.declaration.npwp}&nopib=` +
      `${F.declaration.pibNo}&probe=SBX-DRIFT`,
      { headers: { 'customs-api-key': SANDBOX_API_KEY, authorization: SANDBOX_ACCESS_TOKEN } }
    )
    t.match(drift.body, { data: { no_pib: F.declaration.pibNo } }, 'DRIFT moves it')
    const shape = await call(
      wrapped,
      'GET',
      `/V1/HUB/INT/AUTH/BC20ByNoPib/?npwp=${F.declaration.npwp}&nopib=SBX-SHAPE`,
      { headers: { 'customs-api-key': SANDBOX_API_KEY, authorization: SANDBOX_ACCESS_TOKEN } }
    )
    t.strictSame(shape.body, { item: 'Data tidak tersedia' })
    const listDrift = await send(
      oh,
      requestFor(other, 'noblbc20', { values: { npwp: F.taxpayer.npwp } }),
      requestFor(other, 'noblbc20').headers
    )
    t.equal(listDrift.status, 200)
    const drifted = await call(
      oh,
      'GET',
      `/NLE-DEV/ceisa/v2/noblbc20/?npwp=${F.taxpayer.npwp}&probe=SBX-DRIFT`,
      { headers: requestFor(other, 'noblbc20').headers }
    )
    t.strictSame(
      Object.keys(drifted.body as object),
      ['data bl'],
      "DRIFT moves a list from the profile's key"
    )
  }
)

t.test(
  "errors in the profile's shape: the front's under its first error field (403 and 500 as the " +
  "real hub), an operation's under its last",
  async (t) => {
    const cases = [
      ['500', 500, WENT_WRONG, 'first'],
      ['401', 401, 'Token expired', 'first'],
      ['403', 403, 'Forbidden', 'first'],
      ['504', 504, 'Gateway Timeout', 'first'],
      ['404', 404, 'Data tidak ditemukan', 'last'],
      ['400', 400, 'Parameter tidak valid', 'last'],
      ['422', 422, 'Data tidak dapat diproses', 'last'],
      ['429', 429, 'Too Many Requests', 'last']
    ] as const
    const shapes = {
      'public-callers': {
        first: (text: string) => ({ error: text }),
        last: (text: string) => ({ message: text })
      },
      'other-hub': {
        first: (text: string) => ({ fault: { text } }),
        last: (text: string) => ({ error: text })
      },
      documented: {
        first: (text: string) => ({ message: text }),
        last: (text: string) => ({ message: text })
      }
    }
    for (const name of NAMES) {
      const profile = profileJson(name)
      const sb = await played(t, name)
      for (const [fault, status, text, field] of cases) {
        const res = await send(
          sb,
          requestFor(profile, 'noblbc16', { values: { npwp: magicValue(fault, 'npwp') } })
        )
        t.equal(res.status, status, `${name} ${fault}`)
        t.strictSame(
          res.body,
          shapes[name][field](text),
          `${name} ${fault}: in the ${field} error field`
        )
        if (fault === '429') t.equal(res.headers.get('retry-after'), '7')
      }
      const unknown = await call(sb, 'GET', '/nowhere')
      t.strictSame(unknown.body, shapes[name].last('Not Found'), `${name}: an unknown address`)
      const html = await send(
        sb,
        requestFor(profile, 'noblbc16', { values: { npwp: magicValue('503', 'npwp') } })
      )
      t.match(html.headers.get('content-type'), /^text\/html/, `${name}: the 503 page stays a page`)
    }
  }
)

t.test(
  "a 200 answer reporting a failure, in the profile's members, where a magic value asks for one",
  async (t) => {
    const expected = {
      documented: {
        FAILNOTFOUND: { status: 'Data tidak ditemukan' },
        FAILREJECTED: { status: 'failed', message: 'Permintaan tidak dapat diproses' },
        FAILNODATA: { message: 'Data tidak ditemukan' },
        FAILAUTH: { status: 'failed', message: KEY_REFUSED }
      },
      'public-callers': {
        FAILNOTFOUND: { status: 'Data tidak ditemukan' },
        FAILREJECTED: { status: 'failed', message: 'Permintaan tidak dapat diproses' },
        FAILNODATA: { message: 'Data tidak ditemukan' },
        FAILAUTH: { status: 'failed', error: KEY_REFUSED }
      },
      'other-hub': {
        FAILNOTFOUND: { result: 'Data tidak ditemukan', code: 404 },
        FAILREJECTED: { result: 'failed', error: 'Permintaan tidak dapat diproses', code: 422 },
        FAILNODATA: { error: 'Data tidak ditemukan', code: 404 },
        FAILAUTH: { result: 'failed', fault: { text: KEY_REFUSED }, code: 403 }
      }
    }
    for (const name of NAMES) {
      const profile = profileJson(name)
      const sb = await played(t, name)
      for (const [fault, body] of Object.entries(expected[name])) {
        for (const [id, values] of [
          ['noblbc20', { npwp: magicValue(fault as 'FAILAUTH', 'npwp') }],
          ['kontainerbc25', { blDate: iso(magicValue(fault as 'FAILAUTH', 'date')) }],
          ['document_sp2/final', { sp2Id: magicValue(fault as 'FAILAUTH', 'uuid') }]
        ] as const) {
          const request = hubRequest(
            profile,
            id,
            { ...valuesFor(id), ...values },
            { body: id === 'document_sp2/final' ? { id_document_sp2: values.sp2Id } : undefined }
          )
          const res = await send(sb, request)
          t.equal(res.status, 200, `${name} ${fault} ${id}`)
          t.strictSame(res.body, body, `${name} ${fault} ${id}`)
        }
      }
    }
    const strings = await sandbox(t, {
      profile: {
        name: 'strings',
        stringValues: true,
        defaults: { failure: { statusCodeField: 'code' } }
      }
    })
    const res = await call(
      strings,
      'GET',
      `/V1/HUB/INT/AUTH/noblbc16/?npwp=${magicValue('FAILNOTFOUND', 'npwp')}`,
      { headers: { 'customs-api-key': SANDBOX_API_KEY, authorization: SANDBOX_ACCESS_TOKEN } }
    )
    t.strictSame(
      res.body,
      { status: 'Data tidak ditemukan', code: '404' },
      'a hub that stringifies writes the status as a string'
    )
  }
)

t.test(
  'documented.json plays the default sandbox for every request the documented gateway sends',
  async (t) => {
    const documented = profileJson('documented')
    const plain = await sandbox(t)
    const profiled = await played(t, 'documented')
    const magic: Array<[string, string]> = [
      ['noblbc20', '503'],
      ['noblbc20', '404'],
      ['noblbc20', 'DRIFT'],
      ['noblbc20', 'EMPTY'],
      ['noblbc20', 'FAILNOTFOUND'],
      ['kontainerbc23', 'SHAPE'],
      ['BC20ByNoPib', '422']
    ]
    const requests: HubRequest[] = [
      ...OPERATIONS.map((op) => requestFor(documented, op.id)),
      ...magic.map(([id, fault]) =>
        requestFor(documented, id, {
          values:
            id === 'noblbc20'
              ? { npwp: magicValue(fault as '500', 'npwp') }
              : id === 'kontainerbc23'
                ? { blNo: magicValue(fault as '500') }
                : { pibNo: magicValue(fault as '500') }
        })
      ),
      { ...requestFor(documented, 'noblbc20'), headers: { 'customs-api-key': SANDBOX_API_KEY } },
      { ...requestFor(documented, 'BC20ByNoPib', { values: { pibNo: F.unknownPibNo } }) },
      {
        ...requestFor(documented, 'document_sp2/final'),
        body: { id_document_sp2: F.unknownSp2Id }
      },
      { ...requestFor(documented, 'DetilBooking'), body: { idRequestBooking: F.bookingRequestId } },
      { method: 'GET', path: '/V1/HUB/INT/AUTH/noblbc99/', headers: {} }
    ]
    for (const request of requests) {
      const [a, b] = await Promise.all([send(plain, request), send(profiled, request)])
      t.equal(b.status, a.status, `${request.method} ${request.path}`)
      t.equal(b.text, a.text, `${request.method} ${request.path}: the same bytes`)
    }
    const refused = {
      ...requestFor(documented, 'noblbc20'),
      headers: { 'x-api-key': SANDBOX_API_KEY, authorization: SANDBOX_ACCESS_TOKEN }
    }
    const [a, b] = await Promise.all([send(plain, refused), send(profiled, refused)])
    t.strictSame(
      [a.status, a.body],
      [401, { message: 'Invalid API key' }],
      'the default sandbox keeps its 401'
    )
    t.strictSame(
      [b.status, b.body],
      [403, { message: KEY_REFUSED }],
      'a profile refuses a key as the real hub does: 403'
    )
    const failing = requestFor(documented, 'noblbc20', {
      values: { npwp: magicValue('500', 'npwp') }
    })
    const [c, d] = await Promise.all([send(plain, failing), send(profiled, failing)])
    t.strictSame([c.status, c.body], [500, { message: 'Internal Server Error' }])
    t.strictSame(
      [d.status, d.body],
      [500, { message: WENT_WRONG }],
      'and words its 500 as the real hub does'
    )
  }
)

t.test(
  'a profile the sandbox cannot read or play is refused, each problem at its place in the file',
  async (t) => {
    const problems = async (profile: string | object) => {
      try {
        const sb = await startSandbox({ profile })
        await sb.close()
        return []
      } catch (error) {
        return (error as { problems?: string[] }).problems ?? [String(error)]
      }
    }
    t.strictSame(await problems('/nonexistent/hub.json'), ['cannot be read (ENOENT)'])
    t.match(await problems(new URL('../fixtures/hub-bodies.ts', import.meta.url).pathname), [
      /^is not JSON \(/
    ])
    t.strictSame(
      await problems({
        name: 'x',
        defaults: { dateSent: 'DDMMYYYY', nullString: [] },
        operations: { kontainerbc99: {} }
      }),
      [
        '$.defaults: must NOT have additional properties ("nullString")',
        '$.defaults.dateSent: must be equal to one of the allowed values ("YYYYMMDD", ' +
        '"YYYY-MM-DD")',
        '$.operations: must NOT have additional properties ("kontainerbc99")'
      ]
    )
    t.strictSame(
      await problems({
        name: 'x',
        operations: {
          noblbc16: { path: 'noblbc16/{noBl}' },
          BC20ByNoPib: { path: 'BC20ByNoPib/{npwp}/{npwp}/x{nopib}' },
          BC20ByNoBL: { params: { blNo: 'nobl', npwp: 'nobl' } },
          'document_sp2/final': { path: 'document_sp2/final/{id}', params: { sp2Id: 'id' } }
        }
      }),
      [
        '$.operations.noblbc16.path: {noBl} names no parameter of this operation (its hub names: ' +
        'npwp)',
        '$.operations.BC20ByNoPib.path: {npwp} appears twice',
        '$.operations.BC20ByNoPib.path: "x{nopib}": a placeholder must be a whole segment ' +
        'between slashes',
        '$.operations.BC20ByNoBL.params: two parameters have the hub name "nobl"'
      ]
    )
    await t.rejects(
      startSandbox({ profile: PROFILE_FILES.documented, apiKeyHeader: 'x-key' }),
      /do not go with a profile/
    )
    await t.rejects(
      startSandbox({ profile: PROFILE_FILES.documented, pathSegment: 'NLE' }),
      /do not go with a profile/
    )
  }
)

t.test(
  'what the schema allows but the sandbox cannot play: an operation or a parameter it does not ' +
  'know',
  async (t) => {
    t.strictSame(
      playProblems({
        name: 'x',
        operations: {
          kontainerbc99: {},
          BC20ByNoPib: { params: { npwp: 'npwp', pibNo: 'nopib', containerNo: 'x' } }
        }
      }),
      [
        '$.operations.kontainerbc99: the sandbox has no operation "kontainerbc99"',
        '$.operations.BC20ByNoPib.params: the sandbox\'s BC20ByNoPib does not read "containerNo" ' +
        '(it reads npwp, pibNo)'
      ]
    )
  }
)

t.test('a status member at a dotted path, beside the list', async (t) => {
  const sb = await sandbox(t, {
    profile: {
      name: 'nested-status',
      defaults: { failure: { statusField: 'meta.status', successValues: ['sukses'] } }
    }
  })
  const res = await call(sb, 'GET', `/V1/HUB/INT/AUTH/noblbc16/?npwp=${F.taxpayer.npwp}`, {
    headers: { 'customs-api-key': SANDBOX_API_KEY, authorization: SANDBOX_ACCESS_TOKEN }
  })
  t.match(res.body, { 'Data BL BC 1.6': Array, meta: { status: 'Sukses' } })
  const failed = await call(
    sb,
    'GET',
    `/V1/HUB/INT/AUTH/noblbc16/?npwp=${magicValue('FAILNOTFOUND', 'npwp')}`,
    { headers: { 'customs-api-key': SANDBOX_API_KEY, authorization: SANDBOX_ACCESS_TOKEN } }
  )
  t.strictSame(failed.body, { meta: { status: 'Data tidak ditemukan' } })
})

t.test('an error field with an index: a list of errors (errors.0.detail)', async (t) => {
  const profile = { name: 'error-list', defaults: { errorFields: ['error', 'errors.0.detail'] } }
  const sb = await sandbox(t, { profile })
  const headers = { 'customs-api-key': SANDBOX_API_KEY, authorization: SANDBOX_ACCESS_TOKEN }
  const at = (f: '404' | '403') => `/V1/HUB/INT/AUTH/noblbc16/?npwp=${magicValue(f, 'npwp')}`
  const res = await call(sb, 'GET', at('404'), { headers })
  t.strictSame(res.body, { errors: [{ detail: 'Data tidak ditemukan' }] }, 'the operation\'s error')
  const front = await call(sb, 'GET', at('403'), { headers })
  t.strictSame(front.body, { error: 'Forbidden' }, 'the front\'s')
})

t.test('a body over the limit is refused at the login too', async (t) => {
  const sb = await played(t, 'public-callers')
  const res = await call(sb, 'POST', '/nle-oauth/v1/user/login', {
    raw: JSON.stringify({ username: 'x'.repeat(1100 * 1024) })
  })
  t.equal(res.status, 413)
})

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/**
 * `npm run sandbox` with these arguments and settings: its first line of output, and how it ended
 * when it did.
 */
function runMain (t: Test, args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/sandbox/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, SANDBOX_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { child.kill() })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  return {
    firstLine: async () =>
      String((await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next()).value),
    exit: async () => {
      const [code] = (await once(child, 'exit')) as [number]
      return { code, stderr }
    }
  }
}

t.test(
  'npm run sandbox plays SANDBOX_PROFILE or --profile, and refuses one it cannot play',
  async (t) => {
    const run = runMain(t, [], { SANDBOX_PROFILE: PROFILE_FILES['other-hub'] })
    const line = await run.firstLine()
    const url = /playing the profile other-hub listening on (http:\/\/\S+)/.exec(line)?.[1]
    t.ok(url, line)
    const request = requestFor(profileJson('other-hub'), 'BC20ByNoPib')
    const res = await fetch(`${url ?? ''}${request.path}`, { headers: request.headers })
    t.equal(res.status, 200, 'answers as the profile says')

    const flag = runMain(t, ['--profile', PROFILE_FILES['public-callers']], { SANDBOX_PROFILE: '' })
    t.match(await flag.firstLine(), /playing the profile public-callers listening on http/)

    const bad = runMain(t, ['--profile', '/nonexistent/hub.json'], {})
    t.strictSame(await bad.exit(), {
      code: 1,
      stderr: 'config error: SANDBOX_PROFILE (/nonexistent/hub.json) cannot be read (ENOENT)\n'
    })
  }
)

t.test(
  'the login the profile describes: its addresses, the plain answer or the envelope, a refresh ' +
  'token where it names one',
  async (t) => {
    const credentials = { username: SANDBOX_USERNAME, password: SANDBOX_PASSWORD }
    const expected = {
      documented: {
        path: SANDBOX_LOGIN_PATH,
        refreshPath: undefined,
        token: 'access_token',
        refresh: undefined
      },
      'public-callers': {
        path: '/nle-oauth/v1/user/login',
        refreshPath: '/nle-oauth/v1/user/update-token',
        token: 'item.access_token',
        refresh: 'item.refresh_token'
      },
      'other-hub': {
        path: '/oauth/token',
        refreshPath: '/oauth/token/refresh',
        token: 'access_token',
        refresh: 'refresh_token'
      }
    }
    const at = (body: unknown, path: string): unknown =>
      path
        .split('.')
        .reduce<unknown>((value, name) => (isRecord(value) ? value[name] : undefined), body)
    for (const name of NAMES) {
      const want = expected[name]
      const sb = await played(t, name)
      const login = await call(sb, 'POST', want.path, { body: credentials })
      t.equal(login.status, 200, `${name}: the login at ${want.path}`)
      t.match(at(login.body, want.token), /^sbx-session-/, `${name}: the token at ${want.token}`)
      if (name === 'public-callers') {
        t.match(
          login.body,
          { status: 'success', item: { token_type: 'bearer', expires_in: 300 } },
          'the envelope'
        )
      }
      if (want.refresh === undefined || want.refreshPath === undefined) {
        t.equal(at(login.body, 'refresh_token'), undefined, `${name}: no refresh token`)
        continue
      }
      const refreshToken = String(at(login.body, want.refresh))
      t.match(refreshToken, /^sbx-refresh-/, `${name}: the refresh token at ${want.refresh}`)
      const renewed = await call(sb, 'POST', want.refreshPath, {
        headers: { authorization: `Bearer ${refreshToken}` }
      })
      t.equal(renewed.status, 200, `${name}: renewed at ${want.refreshPath}`)
      t.match(at(renewed.body, want.token), /^sbx-session-/)
      t.equal(
        (await call(sb, 'POST', SANDBOX_LOGIN_PATH, { body: credentials })).status,
        404,
        `${name}: not at the sandbox's own address`
      )
    }
    t.strictSame(
      loginOf({ name: 'x' }),
      { loginAnswer: 'plain', refreshTokens: false },
      "no login member: the sandbox's own"
    )
  }
)

t.test('a login the sandbox cannot answer: fields of neither of its forms', async (t) => {
  t.strictSame(
    playProblems({
      name: 'x',
      login: {
        tokenField: 'item.access_token',
        expiresField: 'expires_in',
        refreshTokenField: 'data.refresh'
      }
    }),
    [
      "$.login.expiresField: the sandbox's login answers in the envelope, with it at " +
      'item.expires_in (its answers: access_token, expires_in, refresh_token, or ' +
      'item.access_token, item.expires_in, item.refresh_token)',
      "$.login.refreshTokenField: the sandbox's login answers in the envelope, with it at " +
      'item.refresh_token (its answers: access_token, expires_in, refresh_token, or ' +
      'item.access_token, item.expires_in, item.refresh_token)'
    ]
  )
  t.strictSame(playProblems({ name: 'x', login: { tokenField: 'token' } }), [
    "$.login.tokenField: the sandbox's login answers plainly, with it at access_token (its " +
    'answers: access_token, expires_in, refresh_token, or item.access_token, item.expires_in, ' +
    'item.refresh_token)'
  ])
})
