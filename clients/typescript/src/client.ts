import createClient from 'openapi-fetch'
import type { FetchResponse, MaybeOptionalInit, Middleware } from 'openapi-fetch'
import type { components, paths } from './openapi.ts'

/** Every non-2xx answer of the gateway (the `error` of a call). */
export type ErrorEnvelope = components['schemas']['ErrorEnvelope']

type Method = 'get' | 'post'

/** The gateway's paths that take this method. */
export type PathsWith<M extends Method> = { [P in keyof paths]: paths[P] extends Record<M, object> ? P : never }[keyof paths]

/** The second argument of a call: `params`, `body` (POST), and fetch's own options. */
export type CallInit<P extends PathsWith<M>, M extends Method> = MaybeOptionalInit<paths[P], M>

/**
 * One method of the client. openapi-fetch infers the type of the second
 * argument from what the caller wrote, which turns off TypeScript's check of
 * excess properties (openapi-ts/openapi-typescript#1769): a misspelt optional
 * parameter or a body field too many would compile. Here that argument has
 * the route's own type, so they do not.
 */
export type Call<M extends Method> = <P extends PathsWith<M>>(
  url: P,
  ...init: undefined extends CallInit<P, M> ? [init?: CallInit<P, M>] : [init: CallInit<P, M>]
) => Promise<FetchResponse<NonNullable<paths[P][M]>, CallInit<P, M>, `${string}/${string}`>>

/** The gateway's routes as openapi-fetch calls: `client.GET('/v1/...', { params })` gives `{ data, error, response }`. */
export interface GatewayClient {
  GET: Call<'get'>
  POST: Call<'post'>
  /** openapi-fetch middleware: `onRequest`, `onResponse`, `onError`. */
  use (...middleware: Middleware[]): void
  eject (...middleware: Middleware[]): void
}

export interface GatewayClientOptions {
  /** The gateway's address, e.g. `https://customs-gateway.example.internal` (routes are added to it: `/v1/...`). */
  baseUrl: string
  /** A client key, sent as `Authorization: Bearer <key>`. Leave out on a sandbox without CLIENTS_FILE. */
  apiKey?: string
  /** Asked before every request for the key (e.g. from a store that rotates it); used instead of `apiKey`. */
  getApiKey?: () => string | undefined | Promise<string | undefined>
  /** The fetch to call (default: the global one). */
  fetch?: (input: Request) => Promise<Response>
}

/**
 * A typed client of the gateway: openapi-fetch over the types generated from
 * its OpenAPI document, so a wrong path, a missing or misnamed parameter, a
 * value of the wrong type or a body field too many does not compile, and
 * `error` is the gateway's ErrorEnvelope.
 *
 * Every request carries `Authorization: Bearer <key>` when a key is given.
 * Every POST carries an `Idempotency-Key`: a new one per call, unless the
 * caller passes its own (`params: { header: { 'idempotency-key': key } }`),
 * which is how a retry of the same write is made safe (README, Idempotent writes).
 *
 * A lookup asked with `params: { header: { 'if-none-match': etag } }` may
 * answer 304 Not Modified: then `data` and `error` are both undefined and
 * `response.status` is 304 (check it first); the data is the one you hold.
 * Such a request is sent in fetch's `no-cache` mode (unless the caller chose
 * a mode), so that the gateway may answer it from its cache.
 */
export function createGatewayClient (options: GatewayClientOptions): GatewayClient {
  const { baseUrl, apiKey, getApiKey, fetch } = options
  const client = createClient<paths>({ baseUrl, ...(fetch === undefined ? {} : { fetch }) })
  const gatewayHeaders: Middleware = {
    async onRequest ({ request }) {
      const key = getApiKey === undefined ? apiKey : await getApiKey()
      if (key !== undefined && key !== '' && !request.headers.has('authorization')) {
        request.headers.set('authorization', `Bearer ${key}`)
      }
      if (request.method === 'POST' && !request.headers.has('idempotency-key')) {
        request.headers.set('idempotency-key', newIdempotencyKey())
      }
      // fetch() adds `cache-control: no-cache` to a request with its own
      // If-None-Match (the Fetch standard, in the default cache mode), which
      // the gateway reads as "ask the hub afresh". In `no-cache` mode it
      // sends `max-age=0` instead, and a fresh cached answer gives the 304.
      if (request.headers.has('if-none-match') && request.cache === 'default') return new Request(request, { cache: 'no-cache' })
      return request
    },
    onResponse ({ response }) {
      // A 304 has no body and no Content-Length; openapi-fetch would read it
      // as an error of '' (it is not 2xx). Said to have no content, it
      // answers `{ data: undefined, error: undefined, response }`.
      if (response.status !== 304) return undefined
      const headers = new Headers(response.headers)
      headers.set('content-length', '0')
      return new Response(null, { status: 304, statusText: response.statusText, headers })
    }
  }
  client.use(gatewayHeaders)
  // The same object: GatewayClient only gives its methods' second argument the route's own type.
  return client as GatewayClient
}

/**
 * A fresh Idempotency-Key, for a caller that keeps it to send a retry of the
 * same write with it: a UUID where the platform has `crypto.randomUUID` (Node, and
 * browsers in a secure context: https or localhost); elsewhere (a page served
 * over plain http on an internal address) 128 random bits in hex, which the
 * gateway accepts as well (1-255 visible ASCII characters).
 */
export function newIdempotencyKey (): string {
  const { crypto } = globalThis
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID()
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), byte => byte.toString(16).padStart(2, '0')).join('')
}
