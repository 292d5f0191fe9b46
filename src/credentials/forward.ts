import { createHash } from 'node:crypto'
import { gatewayError } from '../errors.ts'
import type { Caller, Credentials } from './types.ts'

export const FORWARD_HEADER = 'x-upstream-authorization'

/** Printable ASCII, no control characters, bounded. */
const SANE = /^[\x20-\x7E]{1,4096}$/

function forwarded (caller: Caller | undefined): string {
  const value = caller?.headers[FORWARD_HEADER]
  if (typeof value !== 'string' || !SANE.test(value)) {
    throw gatewayError('UNAUTHORIZED', {
      details: [
        {
          field: `header.${FORWARD_HEADER}`,
          rule: "is required in forward mode: the caller's own hub token, printable ASCII, at " +
            'most 4096 characters'
        }
      ]
    })
  }
  return value
}

/**
 * The caller's own hub token, sent on as the Authorization header. Its
 * identity is a hash of the token, so cached answers are never shared
 * between callers.
 */
export function forwardCredentials (): Credentials {
  return {
    mode: 'forward',
    authorization: async (caller) => forwarded(caller),
    identity: (caller) =>
      `forward:${createHash('sha256').update(forwarded(caller)).digest('base64url')}`,
    // The caller's token is the caller's to renew.
    refresh: async () => false,
    async close () {}
  }
}
