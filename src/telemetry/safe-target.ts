import { context, createContextKey, type Attributes } from '@opentelemetry/api'

/**
 * The address template of the hub call being made (`/V1/HUB/INT/AUTH/noblbc20/`,
 * `{…}` where a value goes), set in the context by the hub client around each
 * attempt, so that the HTTP span of the exchange names the operation rather
 * than the values placed in its address.
 */
export const HUB_TARGET = createContextKey('customs-gateway hub address template')

/**
 * The url.* attributes of an outgoing HTTP span without the values of the
 * call: the path is the hub operation's template when the hub client said
 * it (values may be path segments, a hub profile's placeholders), and every
 * query value is REDACTED, names kept.
 */
export function safeTarget (origin: string, path: string): Attributes {
  const at = path.indexOf('?')
  const template = context.active().getValue(HUB_TARGET)
  const pathname = typeof template === 'string' ? template : (at === -1 ? path : path.slice(0, at))
  const query = at === -1 ? '' : redactQuery(path.slice(at + 1))
  return {
    'url.full': `${origin}${pathname}${query === '' ? '' : `?${query}`}`,
    'url.path': pathname,
    'url.query': query
  }
}

function redactQuery (query: string): string {
  return query.split('&').filter(part => part !== '').map(part => {
    const eq = part.indexOf('=')
    return eq === -1 ? part : `${part.slice(0, eq)}=REDACTED`
  }).join('&')
}
