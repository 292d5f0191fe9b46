// @ts-check
/* global location, HTMLElement, HTMLFormElement, HTMLInputElement, HTMLTableElement, HTMLOListElement */
// The example page: plain ES modules in the browser, typed by the client's
// declarations (`npm run typecheck` checks this file too).
import { createGatewayClient, newIdempotencyKey, subscribeEvents } from '@customs-gateway/client'

/**
 * @typedef {import('@customs-gateway/client').GatewayClient} GatewayClient
 * @typedef {import('@customs-gateway/client').ErrorEnvelope} ErrorEnvelope
 * @typedef {import('@customs-gateway/client').BookedEvent} BookedEvent
 * @typedef {import('@customs-gateway/client').components['schemas']['TaxpayerBillOfLading']} TaxpayerBillOfLading
 */

const TYPE_NAMES = { bc16: 'BC 1.6', bc20: 'BC 2.0', bc23: 'BC 2.3' }

/**
 * The element with this id.
 * @template {HTMLElement} T
 * @param {string} id
 * @param {new () => T} type
 * @returns {T}
 */
function byId (id, type) {
  const element = document.getElementById(id)
  if (!(element instanceof type)) throw new Error(`#${id} is missing`)
  return element
}

const form = {
  connection: byId('connection', HTMLFormElement),
  gatewayUrl: byId('gateway-url', HTMLInputElement),
  apiKey: byId('api-key', HTMLInputElement),
  npwpForm: byId('npwp-form', HTMLFormElement),
  npwp: byId('npwp', HTMLInputElement),
  offer: byId('offer-form', HTMLFormElement),
  bookingRequestId: byId('booking-request-id', HTMLInputElement),
  serviceOrderId: byId('service-order-id', HTMLInputElement),
  price: byId('price', HTMLInputElement),
  offeredAt: byId('offered-at', HTMLInputElement),
  idempotencyKey: byId('idempotency-key', HTMLInputElement)
}
const view = {
  eventsStatus: byId('events-status', HTMLElement),
  billsError: byId('bills-error', HTMLElement),
  billsSummary: byId('bills-summary', HTMLElement),
  bills: byId('bills', HTMLTableElement),
  detail: byId('detail', HTMLElement),
  detailTitle: byId('detail-title', HTMLElement),
  detailError: byId('detail-error', HTMLElement),
  containers: byId('containers', HTMLTableElement),
  containersNote: byId('containers-note', HTMLElement),
  sp2Documents: byId('sp2-documents', HTMLTableElement),
  offerResult: byId('offer-result', HTMLElement),
  offerError: byId('offer-error', HTMLElement),
  eventsCount: byId('events-count', HTMLElement),
  events: byId('events', HTMLOListElement)
}

/** @type {GatewayClient} */
let client
/** @type {{ unsubscribe (): void } | undefined} */
let subscription
let received = 0

// ?gateway=<url> points the page at a gateway; the key is typed in, never put in a URL.
form.gatewayUrl.value = new URLSearchParams(location.search).get('gateway') ?? 'http://127.0.0.1:3000'
form.offeredAt.value = isoWithOffset(new Date())
form.idempotencyKey.value = newIdempotencyKey()
connect()

form.connection.addEventListener('submit', (event) => {
  event.preventDefault()
  connect()
})

/** A client for the gateway and key in the form, and a live subscription to its events. */
function connect () {
  const baseUrl = form.gatewayUrl.value.trim()
  const apiKey = form.apiKey.value.trim() || undefined
  client = createGatewayClient({ baseUrl, apiKey })
  subscription?.unsubscribe()
  view.eventsStatus.textContent = 'Events: connecting'
  subscription = subscribeEvents({
    baseUrl,
    apiKey,
    onOpen () { view.eventsStatus.textContent = 'Events: connected' },
    onError (error) { view.eventsStatus.textContent = `Events: ${error.message}` },
    onEvent: showEvent
  })
}

form.npwpForm.addEventListener('submit', async (event) => {
  event.preventDefault()
  hide(view.billsError)
  view.bills.hidden = true
  view.detail.hidden = true
  view.billsSummary.textContent = 'Loading…'
  const npwp = form.npwp.value.trim()
  const answer = await call(() => client.GET('/v1/taxpayers/{npwp}/bills-of-lading', { params: { path: { npwp } } }))
  view.billsSummary.textContent = ''
  if (answer.error !== undefined) return showError(view.billsError, answer.error)
  const { data, meta } = answer.data
  const counts = Object.entries(TYPE_NAMES).map(([type, name]) => `${name}: ${data.filter(bl => bl.documentType === type).length}`)
  view.billsSummary.textContent = `${meta.count} bills of lading (${counts.join(', ')})`
  const failed = meta.sources.filter(source => source.status === 'failed')
  if (failed.length > 0) {
    showMessage(view.billsError, `Not complete: ${failed.map(source => `${TYPE_NAMES[source.documentType]} ${source.message ?? 'failed'}`).join('; ')}`)
  }
  const rows = data.map(bl => {
    const open = element('button', 'Open')
    open.addEventListener('click', () => openBill(npwp, bl))
    return row([TYPE_NAMES[bl.documentType], bl.blNo, blDay(bl)], open)
  })
  replaceRows(view.bills, rows)
  view.bills.hidden = false
})

/**
 * Shows a BL's containers and SP2 documents.
 * @param {string} npwp
 * @param {TaxpayerBillOfLading} bl
 */
async function openBill (npwp, bl) {
  const blDate = blDay(bl)
  view.detail.hidden = false
  view.detailTitle.textContent = `${TYPE_NAMES[bl.documentType]} ${bl.blNo} of ${blDate}`
  hide(view.detailError)
  replaceRows(view.containers, [])
  replaceRows(view.sp2Documents, [])
  view.containersNote.textContent = 'Loading…'

  const [containers, documents] = await Promise.all([
    containersOf(bl.documentType, bl.blNo, blDate),
    call(() => client.GET('/v1/sp2/documents', { params: { query: { npwp, blNo: bl.blNo, blDate } } }))
  ])
  view.containersNote.textContent = ''
  if (containers === undefined) {
    view.containersNote.textContent = 'The hub has no container lookup for BC 1.6.'
  } else if (containers.error !== undefined) {
    showError(view.detailError, containers.error)
  } else {
    // BC 2.0 containers are looked up by BL date alone: keep this BL's.
    const mine = containers.data.data.filter(container => container.blNo === undefined || container.blNo === bl.blNo)
    replaceRows(view.containers, mine.map(container => row([container.containerNo, container.containerSize, container.containerType])))
  }
  if (documents.error !== undefined) return showError(view.detailError, documents.error)
  replaceRows(view.sp2Documents, documents.data.data.map(document =>
    row([document.sp2Id, document.status, document.containers?.map(container => container.containerNo).join(', ')])))
}

/**
 * The container lookup of a BL's document type (docs/hub.md, Container lists: BC 1.6 has none).
 * @param {TaxpayerBillOfLading['documentType']} type
 * @param {string} blNo
 * @param {string} blDate
 */
function containersOf (type, blNo, blDate) {
  if (type === 'bc20') return call(() => client.GET('/v1/customs/bc20/containers', { params: { query: { blDate } } }))
  if (type === 'bc23') return call(() => client.GET('/v1/customs/bc23/containers', { params: { query: { blNo, blDate } } }))
  return undefined
}

form.offer.addEventListener('submit', async (event) => {
  event.preventDefault()
  hide(view.offerError)
  view.offerResult.textContent = 'Sending…'
  // The key stays the same until the offer is accepted, so sending again after a
  // failure (a timeout, a lost answer) cannot make a second offer.
  const idempotencyKey = form.idempotencyKey.value
  const answer = await call(() => client.POST('/v1/bookings/{bookingRequestId}/offers', {
    params: { path: { bookingRequestId: form.bookingRequestId.value.trim() }, header: { 'idempotency-key': idempotencyKey } },
    body: { serviceOrderId: form.serviceOrderId.value.trim(), price: Number(form.price.value), offeredAt: form.offeredAt.value.trim() }
  }))
  view.offerResult.textContent = ''
  if (answer.error !== undefined) return showError(view.offerError, answer.error)
  const replayed = answer.response.headers.get('idempotent-replayed') === 'true'
  view.offerResult.textContent = `Offer ${replayed ? 'already sent (replayed)' : 'sent'}: request id ${answer.response.headers.get('x-request-id')}, Idempotency-Key ${idempotencyKey}`
  form.idempotencyKey.value = newIdempotencyKey()
})

/** @param {BookedEvent} event */
function showEvent (event) {
  received++
  view.eventsCount.textContent = `${received} received`
  const { bookingRequestId, booked, note } = event.data
  const item = element('li', `${bookingRequestId} ${booked ? 'booked' : 'not booked'}${note === '' ? '' : `: ${note}`}`)
  item.append(element('small', ` at ${new Date(event.occurredAt).toLocaleTimeString()}`))
  view.events.prepend(item)
}

/**
 * Runs a call; when the gateway cannot be reached at all (fetch throws: it is
 * down, or CORS refused this page's origin), answers a sentence saying so.
 * @template T
 * @param {() => Promise<T>} request
 * @returns {Promise<T | { error: string, data?: undefined }>}
 */
async function call (request) {
  try {
    return await request()
  } catch (error) {
    const message = `Could not reach the gateway at ${form.gatewayUrl.value} (${error instanceof Error ? error.message : String(error)}). ` +
      `Is it running, and is ${location.origin} in its CORS_ORIGINS?`
    return { error: message }
  }
}

/**
 * The gateway's own sentence, its code and the request id to quote when asking about it.
 * @param {HTMLElement} target
 * @param {ErrorEnvelope | string} error a sentence when the gateway could not be reached at all
 */
function showError (target, error) {
  if (typeof error === 'string') return showMessage(target, error)
  showMessage(target, `${error.message} (${error.code}, request id ${error.requestId})`)
}

/** @param {HTMLElement} target @param {string} text */
function showMessage (target, text) {
  target.textContent = text
  target.hidden = false
}

/** @param {HTMLElement} target */
function hide (target) {
  target.hidden = true
  target.textContent = ''
}

/** The BL's date, `YYYY-MM-DD`, as the container and SP2 lookups take it. @param {TaxpayerBillOfLading} bl */
function blDay (bl) {
  return (bl.blDate ?? '').slice(0, 10)
}

/**
 * @param {Array<string | number | undefined>} cells
 * @param {HTMLElement} [action]
 */
function row (cells, action) {
  const tr = element('tr')
  for (const cell of cells) tr.append(element('td', cell === undefined ? '' : String(cell)))
  if (action !== undefined) {
    const td = element('td')
    td.append(action)
    tr.append(td)
  }
  return tr
}

/** @param {HTMLTableElement} table @param {HTMLTableRowElement[]} rows */
function replaceRows (table, rows) {
  table.tBodies[0]?.replaceChildren(...rows)
}

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
function element (tag, text) {
  const node = document.createElement(tag)
  if (text !== undefined) node.textContent = text
  return node
}

/** `2024-03-01T08:15:00+07:00`: the local time with its offset, as offers take it. @param {Date} date */
function isoWithOffset (date) {
  const pad = (/** @type {number} */ n) => String(Math.trunc(Math.abs(n))).padStart(2, '0')
  const offset = -date.getTimezoneOffset()
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}` +
    `${offset < 0 ? '-' : '+'}${pad(offset / 60)}:${pad(offset % 60)}`
}
