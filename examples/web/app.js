// @ts-check
/* global location, sessionStorage, HTMLElement, HTMLButtonElement, HTMLFormElement, HTMLInputElement, HTMLTableElement, HTMLOListElement */
// The example page: plain ES modules in the browser, typed by the client's
// declarations (`npm run typecheck` checks this file too).
import { createGatewayClient, newIdempotencyKey, subscribeEvents } from '@customs-gateway/client'

/**
 * @typedef {import('@customs-gateway/client').GatewayClient} GatewayClient
 * @typedef {import('@customs-gateway/client').ErrorEnvelope} ErrorEnvelope
 * @typedef {import('@customs-gateway/client').BookedEvent} BookedEvent
 * @typedef {import('@customs-gateway/client').components['schemas']['TaxpayerBillOfLading']} TaxpayerBillOfLading
 * @typedef {import('@customs-gateway/client').components['schemas']['Shipment']} Shipment
 * @typedef {import('@customs-gateway/client').operations['getShipmentByBlNo']['responses'][200]['content']['application/json']['meta']} ShipmentMeta
 * @typedef {ShipmentMeta['sources'][number]} ShipmentSource
 */

const TYPE_NAMES = { bc16: 'BC 1.6', bc20: 'BC 2.0', bc23: 'BC 2.3' }

/** What a person calls each field the gateway may name in a validation error (`details[].field` is `query.npwp`, `body.price`, …). */
const LABELS = {
  npwp: 'NPWP',
  blNo: 'BL number',
  blDate: 'BL date',
  documentType: 'Document type',
  bookingRequestId: 'Booking request',
  serviceOrderId: 'Service order',
  price: 'Price',
  offeredAt: 'Offered at',
  'idempotency-key': 'Idempotency-Key'
}

/**
 * The hub's offset: it works in western Indonesian time, UTC+7 all year (the
 * gateway's default for the hub). The gateway takes an offer's time in any
 * offset and sends the hub its local time; the page's default is in the hub's
 * time whatever the browser's zone, so that it reads as the hub's records do.
 */
const HUB_OFFSET = '+07:00'
const HUB_OFFSET_MS = 7 * 60 * 60 * 1000

/** The parts of a shipment, as the page names them. */
const PART_NAMES = { declarations: 'BC 2.0 declarations', containers: 'Containers', sp2Documents: 'SP2 documents' }

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
  shipment: byId('shipment', HTMLElement),
  shipmentTitle: byId('shipment-title', HTMLElement),
  shipmentRefresh: byId('shipment-refresh', HTMLButtonElement),
  shipmentSummary: byId('shipment-summary', HTMLElement),
  shipmentError: byId('shipment-error', HTMLElement),
  declarations: byId('declarations', HTMLTableElement),
  declarationsEmpty: byId('declarations-empty', HTMLElement),
  containers: byId('containers', HTMLTableElement),
  containersEmpty: byId('containers-empty', HTMLElement),
  sp2Documents: byId('sp2-documents', HTMLTableElement),
  sp2DocumentsEmpty: byId('sp2-documents-empty', HTMLElement),
  offerResult: byId('offer-result', HTMLElement),
  offerError: byId('offer-error', HTMLElement),
  eventsCount: byId('events-count', HTMLElement),
  events: byId('events', HTMLOListElement)
}

/** @type {GatewayClient} */
let client
/** @type {import('@customs-gateway/client').EventSubscription | undefined} */
let subscription
let received = 0
/** When the event socket opened last (after a reconnect, events that happened before it were missed while it was closed, and are caught up). */
let openedAt = 0
let opens = 0

/**
 * The shipment on screen, and the ETag of its answer (for Refresh).
 * @type {{ npwp: string, blNo: string, blDate: string, documentType: Shipment['documentType'], etag: string | null } | undefined}
 */
let shown

// ?gateway=<url> points the page at a gateway; the key is typed in, never put in a URL.
form.gatewayUrl.value = new URLSearchParams(location.search).get('gateway') ?? 'http://127.0.0.1:3000'
form.offeredAt.value = inHubTime(new Date())
form.idempotencyKey.value = newIdempotencyKey()
connect()

form.connection.addEventListener('submit', (event) => {
  event.preventDefault()
  connect()
})

/** Where the page's event position is kept, so that a reload of the page resumes too. */
const POSITION_KEY = 'customs-gateway-example:lastEventId'

/** A client for the gateway and key in the form, and a live subscription to its events. */
function connect () {
  const baseUrl = form.gatewayUrl.value.trim()
  const apiKey = form.apiKey.value.trim() || undefined
  client = createGatewayClient({ baseUrl, apiKey })
  subscription?.unsubscribe()
  opens = 0
  view.eventsStatus.textContent = 'Events: connecting'
  const kept = readPosition(baseUrl)
  subscription = subscribeEvents({
    baseUrl,
    apiKey,
    ...(kept === undefined ? {} : { lastEventId: kept }),
    onOpen () {
      opens++
      openedAt = Date.now()
      // The client resumes after the last event it saw: what was sent while the socket was closed comes first.
      view.eventsStatus.textContent = opens === 1
        ? 'Events: connected'
        : `Events: reconnected at ${new Date(openedAt).toLocaleTimeString()}, resumed after the last event seen: nothing missed`
    },
    onReload (signal) {
      // The gateway could not replay the gap (too long, or its log was lost): what the page shows may be out of date.
      view.eventsStatus.textContent = `Events: reconnected, but what was sent meanwhile could not be replayed (${signal.reason}): the shipment was reloaded`
      if (shown !== undefined) showShipment().catch(failedOnPage)
    },
    onError (error) { view.eventsStatus.textContent = `Events: ${error.message}` },
    onEvent (event) {
      showEvent(event)
      keepPosition(baseUrl)
    }
  })
}

/** @param {string} baseUrl */
function readPosition (baseUrl) {
  try {
    const kept = JSON.parse(sessionStorage.getItem(POSITION_KEY) ?? 'null')
    return kept?.gateway === baseUrl && typeof kept.lastEventId === 'string' ? kept.lastEventId : undefined
  } catch {
    return undefined
  }
}

/** @param {string} baseUrl */
function keepPosition (baseUrl) {
  const lastEventId = subscription?.lastEventId
  if (lastEventId !== undefined) sessionStorage.setItem(POSITION_KEY, JSON.stringify({ gateway: baseUrl, lastEventId }))
}

form.npwpForm.addEventListener('submit', async (event) => {
  event.preventDefault()
  hide(view.billsError)
  view.bills.hidden = true
  view.shipment.hidden = true
  view.billsSummary.textContent = 'Loading…'
  const npwp = form.npwp.value.trim()
  const answer = await call(() => client.GET('/v1/taxpayers/{npwp}/bills-of-lading', { params: { path: { npwp } } }))
  view.billsSummary.textContent = ''
  if (answer.error !== undefined) return showError(view.billsError, answer.error)
  if (answer.data === undefined) return
  const { data, meta } = answer.data
  const failed = meta.sources.filter(source => source.status === 'failed')
  if (failed.length > 0) {
    showMessage(view.billsError, `Not complete: ${failed.map(source => `${TYPE_NAMES[source.documentType]}: ${source.message ?? 'failed'}`).join('; ')}`)
  }
  if (data.length === 0) {
    view.billsSummary.textContent = `The hub lists no bills of lading for NPWP ${npwp}${failed.length > 0 ? ' in the lists that answered' : ''}.`
    return
  }
  const counts = Object.entries(TYPE_NAMES).map(([type, name]) => `${name}: ${data.filter(bl => bl.documentType === type).length}`)
  view.billsSummary.textContent = `${meta.count} bills of lading (${counts.join(', ')})`
  const rows = data.map(bl => {
    const open = element('button', 'Open')
    open.addEventListener('click', () => openShipment(npwp, bl))
    return row([TYPE_NAMES[bl.documentType], bl.blNo, bl.blDate], open)
  })
  replaceRows(view.bills, rows)
  view.bills.hidden = false
})

/**
 * A BL's shipment: its declarations, containers and SP2 documents, from one call.
 * @param {string} npwp
 * @param {TaxpayerBillOfLading} bl
 */
async function openShipment (npwp, bl) {
  shown = { npwp, blNo: bl.blNo, blDate: bl.blDate, documentType: bl.documentType, etag: null }
  view.shipment.hidden = false
  view.shipmentTitle.textContent = `${TYPE_NAMES[bl.documentType]} ${bl.blNo} of ${bl.blDate}`
  for (const table of [view.declarations, view.containers, view.sp2Documents]) replaceRows(table, [])
  for (const note of [view.declarationsEmpty, view.containersEmpty, view.sp2DocumentsEmpty]) hide(note)
  await showShipment()
}

view.shipmentRefresh.addEventListener('click', () => { showShipment(true).catch(failedOnPage) })

/**
 * Asks for the shipment on screen. Refreshing sends the ETag of what is shown:
 * while nothing changed the gateway answers 304, without a body (and without
 * asking the hub while its cached answer is fresh).
 * @param {boolean} [refresh]
 */
async function showShipment (refresh = false) {
  if (shown === undefined) return
  const current = shown
  hide(view.shipmentError)
  view.shipmentSummary.textContent = 'Loading…'
  const header = refresh && current.etag !== null ? { 'if-none-match': current.etag } : undefined
  const answer = await call(() => client.GET('/v1/shipments/{blNo}', {
    params: { path: { blNo: current.blNo }, query: { npwp: current.npwp, blDate: current.blDate, documentType: current.documentType }, ...(header === undefined ? {} : { header }) }
  }))
  if (shown !== current) return
  if (answer.error !== undefined) {
    view.shipmentSummary.textContent = ''
    return showError(view.shipmentError, answer.error)
  }
  if (answer.response.status === 304) {
    view.shipmentSummary.textContent = `Unchanged at ${new Date().toLocaleTimeString()}: the gateway answered 304 Not Modified, nothing was downloaded.`
    return
  }
  if (answer.data === undefined) return
  current.etag = answer.response.headers.get('etag')
  renderShipment(answer.data.data, answer.data.meta)
}

/**
 * @param {Shipment} shipment
 * @param {ShipmentMeta} meta
 */
function renderShipment (shipment, meta) {
  const failed = meta.sources.filter(source => source.status === 'failed')
  view.shipmentSummary.textContent = failed.length === 0
    ? `Every source answered${meta.cached ? ' (from the gateway\'s cache)' : ''}.`
    : ''
  if (failed.length > 0) {
    showMessage(view.shipmentError, `Not complete: ${failed.map(source => `${PART_NAMES[source.part]}: ${source.message ?? 'failed'}`).join('; ')}`)
  }
  const sourceOf = (/** @type {ShipmentSource['part']} */ part) => meta.sources.find(source => source.part === part)

  const { declarations, containers, sp2Documents } = shipment
  replaceRows(view.declarations, (declarations ?? []).map(d => row([d.pibNo, d.pibDate, d.status, d.sppbNo])))
  emptyState(view.declarationsEmpty, declarations, sourceOf('declarations'), 'No BC 2.0 declarations for this BL.')

  // A container's gate pass is on its SP2 document.
  const gatePasses = new Map()
  for (const sp2 of sp2Documents ?? []) {
    for (const container of sp2.containers) gatePasses.set(container.containerNo, container.gatePass)
  }
  replaceRows(view.containers, (containers ?? []).map(c => row([c.containerNo, c.containerSize, c.containerType, gatePasses.get(c.containerNo) ?? 'none yet'])))
  emptyState(view.containersEmpty, containers, sourceOf('containers'), 'No containers listed for this BL.')

  replaceRows(view.sp2Documents, (sp2Documents ?? []).map(d =>
    row([d.sp2Id, d.status, d.terminal, d.containers.map(c => c.containerNo).join(', ')])))
  emptyState(view.sp2DocumentsEmpty, sp2Documents, sourceOf('sp2Documents'), 'No SP2 documents for this BL yet.')
}

/**
 * What a part shows when it has no rows: why (its source failed, or the hub has no such lookup), or that the hub has none.
 * @param {HTMLElement} note
 * @param {unknown[] | null} list
 * @param {ShipmentSource | undefined} source
 * @param {string} none
 */
function emptyState (note, list, source, none) {
  if (list !== null && list.length > 0) return hide(note)
  const text = list !== null
    ? none
    : source?.status === 'failed'
      ? `Could not be loaded: ${source.message ?? 'the hub failed'}${source.code === undefined ? '' : ` (${source.code})`}.`
      : `${source?.message ?? 'Not available'}.`
  showMessage(note, text)
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
  // Sent before this socket opened, after a reconnect: it happened while the page was disconnected, and was not lost.
  if (opens > 1 && Date.parse(event.occurredAt) < openedAt) item.append(element('small', ' (sent while disconnected, caught up on reconnect)'))
  view.events.prepend(item)
}

/**
 * Runs a call; when the gateway cannot be reached at all (fetch throws: it is
 * down, or CORS refused this page's origin), answers a sentence saying so.
 * @template T
 * @param {() => Promise<T>} request
 * @returns {Promise<T | { error: string, data?: undefined, response?: undefined }>}
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
 * The gateway's error for a person: each invalid field by its label with the
 * rule it breaks, or the gateway's own sentence; and the request id to quote
 * when asking about it.
 * @param {HTMLElement} target
 * @param {ErrorEnvelope | string} error a sentence when the gateway could not be reached at all
 */
function showError (target, error) {
  if (typeof error === 'string') return showMessage(target, error)
  const problems = error.code === 'VALIDATION_FAILED' && error.details !== undefined && error.details.length > 0
    ? error.details.map(detail => `${label(detail.field)} ${detail.rule}`).join('; ')
    : undefined
  showMessage(target, `${problems ?? error.message} (${error.code}, request id ${error.requestId})`)
}

/**
 * A field of a validation error by the name the page gives it: `query.npwp` is "NPWP".
 * @param {string} field
 */
function label (field) {
  const name = field.slice(field.indexOf('.') + 1)
  if (field === 'body') return 'The request'
  return /** @type {Record<string, string>} */ (LABELS)[name] ?? name
}

/** A bug of the page itself: said where the shipment is shown, rather than lost. @param {unknown} error */
function failedOnPage (error) {
  showMessage(view.shipmentError, `The page failed: ${error instanceof Error ? error.message : String(error)}`)
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

/**
 * @param {Array<string | number | null | undefined>} cells
 * @param {HTMLElement} [action]
 */
function row (cells, action) {
  const tr = element('tr')
  for (const cell of cells) tr.append(element('td', cell === undefined || cell === null ? '' : String(cell)))
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

/**
 * `2024-03-01T08:15:00+07:00`: this moment in the hub's time, as offers take it.
 * @param {Date} date
 */
function inHubTime (date) {
  return `${new Date(date.getTime() + HUB_OFFSET_MS).toISOString().slice(0, 19)}${HUB_OFFSET}`
}
