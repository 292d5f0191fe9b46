import type { components } from './openapi.ts'

/** The message of `GET /v1/events` after a successful booked POST (the document's BookedEvent). */
export type BookedEvent = components['schemas']['BookedEvent']

/** Every event the socket delivers. */
export type GatewayEvent = BookedEvent

/** The gateway could not give what was missed (the id was older than its window, or events were lost): reload what the page shows. */
export type StreamReload = components['schemas']['StreamReload']

const EVENT_TYPES: ReadonlySet<string> = new Set<GatewayEvent['type']>(['booking.booked'])

/**
 * What subscribeEvents needs of a WebSocket: the browser's, Node's global one
 * (Node 22 and later), or any class with the same shape (e.g. the `ws` package's).
 */
export interface WebSocketLike {
  readonly readyState: number
  close (code?: number, reason?: string): void
  addEventListener (type: 'open' | 'error', listener: () => void): void
  addEventListener (type: 'message', listener: (event: { data: unknown }) => void): void
  addEventListener (type: 'close', listener: (event: { code: number, reason: string }) => void): void
}

export type WebSocketConstructorLike = new (url: string, protocols?: string | string[]) => WebSocketLike

export interface ReconnectOptions {
  /** Ceiling of the first delay (default 500 ms); it doubles with every failed attempt. */
  minDelayMs?: number
  /** Largest ceiling (default 30 s). */
  maxDelayMs?: number
}

export interface SubscribeEventsOptions {
  /** The gateway's address, as for createGatewayClient (`http(s)://`; the socket uses `ws(s)://`). */
  baseUrl: string
  /** A client key with the `events:read` scope; offered as the `bearer` subprotocol, never put in the URL. */
  apiKey?: string
  onEvent: (event: GatewayEvent) => void
  /**
   * Called when the gateway cannot replay what was missed while the socket was
   * closed (the gap was longer than its window, it restarted without its log, or
   * events were lost): reload what the page shows from the API. Events flow on after it.
   */
  onReload?: (signal: StreamReload) => void
  /**
   * Resume after this event id (one the page kept, e.g. in sessionStorage, from
   * `subscription.lastEventId`); default: from now on.
   */
  lastEventId?: string
  /** The socket could not connect or was closed (`retryInMs` says when the next attempt is), or a message was unreadable. */
  onError?: (error: EventSocketError) => void
  /** The socket is open (again): what was sent while it was closed comes first (or onReload), then what follows. */
  onOpen?: () => void
  /** The WebSocket class (default: the global one). */
  WebSocket?: WebSocketConstructorLike
  /** Reconnection with exponential backoff and jitter (default on); `false`: stop at the first close. */
  reconnect?: ReconnectOptions | false
}

export interface EventSubscription {
  /** Closes the socket and stops reconnecting. */
  unsubscribe (): void
  /** The position the subscription resumes from: the last event id seen (or the gateway's position); undefined before the first connection. */
  readonly lastEventId: string | undefined
}

export class EventSocketError extends Error {
  /** The WebSocket close code, when the socket closed (1006: it could not connect or the connection dropped). */
  readonly closeCode: number | undefined
  /** When the next attempt is made; undefined when there is none. */
  readonly retryInMs: number | undefined

  constructor (message: string, details: { closeCode?: number, retryInMs?: number } = {}) {
    super(message)
    this.name = 'EventSocketError'
    this.closeCode = details.closeCode
    this.retryInMs = details.retryInMs
  }
}

/** RFC 6455 7.4.1: a normal closure, which is what unsubscribe sends. */
const NORMAL_CLOSURE = 1000
/** RFC 6455 7.4.1: the connection was lost or never made (never sent in a close frame). */
const ABNORMAL_CLOSURE = 1006

/**
 * Booked notifications of `GET /v1/events`, as typed events, each once.
 *
 * The key travels as the WebSocket subprotocol pair `bearer, <key>` (browsers
 * cannot set headers on a WebSocket, and a key in the URL would be logged);
 * the gateway agrees on `bearer` only, so it never echoes the key. The socket
 * asks for the resume protocol (`?lastEventId=`): the gateway tells it its
 * position, and when the socket closes for any reason but unsubscribe, it
 * reconnects with the last id seen and gets first what it missed (or
 * `onReload` when the gateway no longer has it). An event whose id is not
 * after the last one seen is dropped, so a page never sees one twice. It
 * reconnects after a delay drawn between half and all of a ceiling that
 * doubles with every failed attempt (from `minDelayMs` to `maxDelayMs`) and
 * starts again once a connection opens, so that many clients dropped at once
 * by a restart do not come back in step.
 */
export function subscribeEvents (options: SubscribeEventsOptions): EventSubscription {
  const { apiKey, onEvent, onError, onOpen, onReload } = options
  const WebSocketClass: WebSocketConstructorLike = options.WebSocket ?? globalThis.WebSocket
  const protocols = apiKey === undefined || apiKey === '' ? [] : ['bearer', apiKey]
  const reconnect = options.reconnect === false ? undefined : { minDelayMs: 500, maxDelayMs: 30_000, ...options.reconnect }

  let socket: WebSocketLike | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  let failures = 0
  let stopped = false
  let lastEventId = options.lastEventId

  const connect = () => {
    timer = undefined
    let opened = false
    const url = eventsUrl(options.baseUrl, lastEventId ?? 'now')
    const current = new WebSocketClass(url, protocols)
    socket = current
    /** The socket is done with: report it, and try again unless told not to. */
    const ended = (code: number, reason: string) => {
      if (stopped || socket !== current) return
      socket = undefined
      const what = opened ? `The event socket closed (code ${code}${reason === '' ? '' : `: ${reason}`})` : `The event socket could not connect to ${eventsUrl(options.baseUrl)}`
      if (reconnect === undefined) {
        stopped = true
        onError?.(new EventSocketError(what, { closeCode: code }))
        return
      }
      const ceiling = Math.min(reconnect.maxDelayMs, reconnect.minDelayMs * 2 ** failures)
      const retryInMs = Math.round(ceiling / 2 + Math.random() * ceiling / 2)
      failures++
      onError?.(new EventSocketError(`${what}; trying again in ${retryInMs} ms`, { closeCode: code, retryInMs }))
      timer = setTimeout(connect, retryInMs)
    }
    // An error event means the connection failed: its close code is 1006. Browsers
    // and Node 24 follow it with a close event, which then finds the socket ended;
    // Node 22's WebSocket fires none after a refused handshake (it stays CONNECTING,
    // and its close() fires the error again), so the error itself ends it. Listening
    // also keeps EventEmitter-based classes such as ws's from throwing the error.
    current.addEventListener('error', () => ended(ABNORMAL_CLOSURE, ''))
    current.addEventListener('close', ({ code, reason }) => ended(code, reason))
    current.addEventListener('open', () => {
      opened = true
      failures = 0
      onOpen?.()
    })
    current.addEventListener('message', ({ data }) => {
      if (socket !== current) return
      const message = readMessage(data)
      if (message === undefined) {
        onError?.(new EventSocketError('An event message was not a JSON event object'))
        return
      }
      const { type, id } = message
      if (typeof id === 'string' && ID.test(id)) {
        if (type === 'stream.reload') {
          lastEventId = id
          onReload?.(message as StreamReload)
          return
        }
        if (type === 'stream.position') {
          lastEventId = id
          return
        }
        // Seen already (replayed after a reconnect that raced its delivery): dropped.
        if (lastEventId !== undefined && ID.test(lastEventId) && compareIds(id, lastEventId) <= 0) return
        lastEventId = id
      }
      if (EVENT_TYPES.has(type)) onEvent(message as GatewayEvent)
      // Other types are events a newer gateway sends that this client does not know yet.
    })
  }
  connect()

  return {
    unsubscribe () {
      if (stopped) return
      stopped = true
      if (timer !== undefined) clearTimeout(timer)
      socket?.close(NORMAL_CLOSURE, 'unsubscribed')
      socket = undefined
    },
    get lastEventId () { return lastEventId }
  }
}

/** An event id: `<ms>-<seq>`, ordered by the milliseconds, then the sequence. */
const ID = /^(\d{1,15})-(\d{1,15})$/

function compareIds (a: string, b: string): number {
  const [, ams, aseq] = ID.exec(a)!
  const [, bms, bseq] = ID.exec(b)!
  return Number(ams) - Number(bms) || Number(aseq) - Number(bseq)
}

/** `<baseUrl>/v1/events` with the WebSocket scheme (a path in baseUrl is kept, as openapi-fetch keeps it), and where to resume from. */
function eventsUrl (baseUrl: string, lastEventId?: string): string {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}/v1/events`)
  if (url.protocol === 'http:') url.protocol = 'ws:'
  else if (url.protocol === 'https:') url.protocol = 'wss:'
  if (lastEventId !== undefined) url.searchParams.set('lastEventId', lastEventId)
  return url.href
}

function readMessage (data: unknown): { type: string, id?: unknown } | undefined {
  if (typeof data !== 'string') return undefined
  try {
    const value: unknown = JSON.parse(data)
    if (typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string') return value as { type: string, id?: unknown }
  } catch {}
  return undefined
}
