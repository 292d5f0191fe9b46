import { createHash, randomBytes } from 'node:crypto'

/**
 * Client keys: 32 random bytes, base64url, behind a recognisable prefix (so
 * that secret scanners and people can tell one when they see it). Only the
 * SHA-256 of a key is kept in the clients file. A plain hash is enough for a
 * 256-bit random key: there is nothing to brute-force, unlike a password.
 * base64url characters are all HTTP token characters, so a key can also ride
 * in `Sec-WebSocket-Protocol` (see plugins/events.ts).
 */
export const KEY_PREFIX = 'cgw_'

export function generateClientKey (): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url')
}

/** Lower-case hex SHA-256 of a key, as the clients file holds it. */
export function hashClientKey (key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex')
}
