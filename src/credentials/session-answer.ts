import type { HubSession } from '../state/types.ts'

/**
 * Where the login and renewal answers hold what the gateway needs: dotted paths
 * (`item.access_token`).
 */
export interface SessionFields {
  token: string
  /** The token's lifetime, in seconds. */
  expiresIn: string
  refreshToken: string
}

/** A token whose answer gives no usable lifetime lives this long, as a cautious guess. */
export const DEFAULT_LIFETIME_MS = 5 * 60_000

/** The value at a dotted path (`item.access_token`; array items by index, `data.0.token`). */
export function pick (value: unknown, path: string): unknown {
  let out = value
  for (const part of path.split('.')) {
    if (out === null || typeof out !== 'object' || !Object.hasOwn(out, part)) return undefined
    out = (out as Record<string, unknown>)[part]
  }
  return out
}

export interface SessionOptions {
  fields: SessionFields
  /** `Bearer`, or empty for the token alone. */
  scheme: string
  /** Renew this long before expiry, or at half the lifetime when that comes first. */
  renewBeforeMs: number
  now: number
}

/**
 * The session a login or renewal answer describes, or undefined when the
 * answer holds no token where `fields.token` says. A lifetime that is
 * missing, not a positive number or written as text of one is read as
 * such (a hub that stringifies every value sends `"900"`).
 */
export function sessionFrom (
  answer: unknown,
  { fields, scheme, renewBeforeMs, now }: SessionOptions
): { session: HubSession; lifetimeMs: number } | undefined {
  const token = pick(answer, fields.token)
  if (typeof token !== 'string' || token === '') return undefined
  const raw = pick(answer, fields.expiresIn)
  const seconds =
    typeof raw === 'number' || (typeof raw === 'string' && raw.trim() !== '')
      ? Number(raw)
      : Number.NaN
  const lifetimeMs = Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : DEFAULT_LIFETIME_MS
  // A token that lives less than twice the margin would be due at once: renewed on every call.
  const marginMs = Math.min(renewBeforeMs, lifetimeMs / 2)
  const refreshToken = pick(answer, fields.refreshToken)
  return {
    lifetimeMs,
    session: {
      authorization: scheme === '' ? token : `${scheme} ${token}`,
      expiresAt: now + lifetimeMs,
      renewAt: now + lifetimeMs - marginMs,
      ...(typeof refreshToken === 'string' && refreshToken !== '' ? { refreshToken } : {})
    }
  }
}
