import type { FastifyRequest } from 'fastify'

const REDACTED = '[redacted]'
/** A parameter name worth keeping in the log: short, and nothing a key could be. */
const PLAIN_NAME = /^[A-Za-z0-9_.[\]-]{1,40}$/

/** The rule a known parameter's value must meet to be logged. */
export interface KnownParam { pattern?: string, maxLength?: number, format?: string }
/** Values longer than this are never logged, whatever their parameter. */
const LONGEST_SHOWN = 64

/** The query parameters a route's schema names, with their rules. */
function knownParams (request: FastifyRequest): ReadonlyMap<string, KnownParam> {
  const schema = request.routeOptions?.schema?.querystring as
    { properties?: Record<string, KnownParam> } | undefined
  return new Map(Object.entries(schema?.properties ?? {}))
}

/** The routes' patterns, compiled once each (a handful). */
const compiled = new Map<string, RegExp>()

function shows (rule: KnownParam, value: string): boolean {
  // A secret that must travel in the URL (an event-stream ticket) is declared so.
  if (rule.format === 'password') return false
  if (value.length > Math.min(rule.maxLength ?? LONGEST_SHOWN, LONGEST_SHOWN)) return false
  if (rule.pattern === undefined) return true
  let pattern = compiled.get(rule.pattern)
  if (pattern === undefined) compiled.set(rule.pattern, pattern = new RegExp(rule.pattern, 'u'))
  return pattern.test(value)
}

/**
 * The URL as it may be logged: the values of the route's own query
 * parameters are kept when they fit the parameter's rule (a key sent as
 * `npwp=` does not), every other value is `[redacted]`, and so is a name
 * that is not a short plain word. A caller may put anything in a query
 * string, its client key included (`?access_token=cgw_…` is refused, but the
 * request line is logged before that).
 */
export function redactQuery (url: string, known: ReadonlyMap<string, KnownParam>): string {
  const mark = url.indexOf('?')
  if (mark === -1) return url
  const pairs = url.slice(mark + 1).split('&').map(pair => {
    if (pair === '') return pair
    const eq = pair.indexOf('=')
    const rawName = eq === -1 ? pair : pair.slice(0, eq)
    let name = ''
    try {
      name = decodeURIComponent(rawName.replaceAll('+', ' '))
    } catch {
      // Bad percent-encoding: not a known name.
    }
    const rule = known.get(name)
    if (eq !== -1 && rule !== undefined) {
      let value: string | undefined
      try {
        value = decodeURIComponent(pair.slice(eq + 1).replaceAll('+', ' '))
      } catch {
        // Bad percent-encoding: not shown.
      }
      return value !== undefined && shows(rule, value) ? pair : `${rawName}=${REDACTED}`
    }
    const shown = PLAIN_NAME.test(rawName) ? rawName : REDACTED
    return eq === -1 ? shown : `${shown}=${REDACTED}`
  })
  return `${url.slice(0, mark)}?${pairs.join('&')}`
}

/**
 * Fastify's request serializer (the `req` of request lines), with the query redacted. No headers:
 * app.ts redactPaths redacts none under `req`.
 */
export function serializeRequest (request: FastifyRequest) {
  return {
    method: request.method,
    url:
      typeof request.url === 'string' ? redactQuery(request.url, knownParams(request)) : undefined,
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort
  }
}
