/**
 * The hub's own error text as it may be shown to a caller (`upstreamMessage`):
 * from 4xx answers (5xx bodies carried host names and file paths) and from
 * the 2xx answers a profile says report a failure, with the gateway's
 * secrets scrubbed out before it is cut to length.
 */

/** Longest `upstreamMessage` passed on. */
export const MESSAGE_LIMIT = 500
/**
 * How much of the hub's message is scrubbed at all (the work is linear in it); the rest is never
 * shown.
 */
const SCRUB_LIMIT = 4096
/**
 * A piece of a secret this long or longer is scrubbed wherever it appears (a secret cut at an edge,
 * by us or by the hub).
 */
export const SECRET_PIECE = 8
const REDACTED = '[redacted]'

/**
 * ASCII letters lower-cased, every other character kept: the same length, so positions still match.
 */
function foldCase (text: string): string {
  return text.replace(/[A-Z]+/g, upper => upper.toLowerCase())
}

/**
 * `Bearer abc` -> `abc`: the token without its scheme (RFC 9110 11.4: a scheme, then whitespace).
 */
const SCHEME = /^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*[ \t]+(\S.*)$/

/**
 * The forms to look for, case-folded: each secret whole, and the token
 * without its scheme; `pieces` come from the secrets without their scheme
 * only, so that `bearer x` in a message is not taken for a piece of one.
 */
function formsOf (secrets: readonly string[]): { whole: string[], pieces: Set<string> } {
  const whole = new Set<string>()
  const pieces = new Set<string>()
  for (const secret of secrets) {
    if (secret === '') continue
    const bare = SCHEME.exec(secret)?.[1] ?? secret
    whole.add(foldCase(secret))
    whole.add(foldCase(bare))
    const folded = foldCase(bare)
    for (let i = 0; i + SECRET_PIECE <= folded.length; i++) {
      pieces.add(folded.slice(i, i + SECRET_PIECE))
    }
  }
  return { whole: [...whole], pieces }
}

/**
 * `text` with the secrets replaced by `[redacted]`: each secret and the token
 * without its scheme, in any letter case, and every stretch of 8 or more
 * characters that is part of a secret (what is left of one cut at an edge).
 */
export function scrubSecrets (text: string, secrets: readonly string[]): string {
  const { whole, pieces } = formsOf(secrets)
  if (whole.length === 0) return text
  const folded = foldCase(text)
  const hidden = new Uint8Array(text.length)
  const hide = (from: number, length: number): void => { hidden.fill(1, from, from + length) }
  for (const form of whole) {
    for (let at = folded.indexOf(form); at !== -1; at = folded.indexOf(form, at + 1)) {
      hide(at, form.length)
    }
  }
  if (pieces.size > 0) {
    for (let at = 0; at + SECRET_PIECE <= folded.length; at++) {
      if (pieces.has(folded.slice(at, at + SECRET_PIECE))) hide(at, SECRET_PIECE)
    }
  }
  let out = ''
  for (let at = 0; at < text.length;) {
    if (hidden[at] === 0) {
      const end = hidden.indexOf(1, at)
      out += text.slice(at, end === -1 ? text.length : end)
      at = end === -1 ? text.length : end
    } else {
      const end = hidden.indexOf(0, at)
      out += REDACTED
      at = end === -1 ? text.length : end
    }
  }
  return out
}

/**
 * The value at a dotted path of a parsed body (`error.detail`; a list's
 * item by its index, `errors.0.detail`, as APIs that answer a list of
 * errors put their text). Own members only: `constructor` is no member.
 */
export function pick (value: unknown, path: string): unknown {
  let out = value
  for (const part of path.split('.')) {
    if (out === null || typeof out !== 'object') return undefined
    if (Array.isArray(out) ? !/^(0|[1-9]\d*)$/.test(part) : !Object.hasOwn(out, part)) {
      return undefined
    }
    out = (out as Record<string, unknown>)[part]
  }
  return out
}

/**
 * The error text of a parsed hub body: the first of `fields` (the profile's
 * errorFields, `message` by default) that holds a text, scrubbed and then
 * bounded, with the field it came from; undefined when none does.
 */
export function hubText (
  parsed: unknown,
  fields: readonly string[],
  secrets: readonly string[]
): { text: string; field: string } | undefined {
  for (const field of fields) {
    const value = pick(parsed, field)
    if (typeof value === 'string' && value !== '') {
      return {
        text: scrubSecrets(value.slice(0, SCRUB_LIMIT), secrets).slice(0, MESSAGE_LIMIT),
        field
      }
    }
  }
  return undefined
}

/**
 * The error text of a hub error body, for a 4xx answer, scrubbed and then
 * bounded, with the field it came from (`fields`: where the hub writes it,
 * `message` as documented); undefined for other statuses, or when there is none.
 */
export function hubError (
  status: number,
  text: string,
  secrets: readonly string[],
  fields: readonly string[] = ['message']
): { text: string; field: string } | undefined {
  if (status < 400 || status >= 500) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined
  }
  return hubText(parsed, fields, secrets)
}

/**
 * The `message` of a hub error body, for a 4xx answer, scrubbed and then bounded; undefined for
 * other statuses, or when there is none.
 */
export function hubMessage (
  status: number,
  text: string,
  secrets: readonly string[]
): string | undefined {
  return hubError(status, text, secrets)?.text
}
