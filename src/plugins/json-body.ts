import { isUtf8 } from 'node:buffer'
import type { FastifyRequest } from 'fastify'
import sjson from 'secure-json-parse'
import { gatewayError } from '../errors.ts'

const FORBIDDEN = { protoAction: 'error', constructorAction: 'error' } as const

/**
 * The JSON body parser, in place of Fastify's default, for what a caller
 * should read when a body is refused:
 * - an empty body is no body (the finalization takes none; on the other
 *   writes the body schema then says `body is required`), rather than
 *   Fastify's "Body cannot be empty when content-type is set";
 * - a `__proto__` or `constructor.prototype` key is refused by name, rather
 *   than reported as "Body is not valid JSON" (Fastify folds secure-json-parse's
 *   refusal into its invalid-JSON error);
 * - bytes that are not UTF-8 are refused (JSON is UTF-8), rather than read as
 *   U+FFFD: a lone surrogate sent as raw bytes (ED A0 80) would otherwise pass
 *   as three replacement characters, a value the caller never wrote.
 * The checks are secure-json-parse's, as in Fastify's own parser. Nothing of
 * the body is echoed: a message built from JSON.parse's would quote it.
 */
export function parseJsonBody (
  _request: FastifyRequest,
  bytes: Buffer,
  done: (error: Error | null, body?: unknown) => void
): void {
  if (!isUtf8(bytes)) {
    done(
      gatewayError(
        'VALIDATION_FAILED',
        { details: [{ field: 'body', rule: 'must be valid JSON: UTF-8 text' }] },
        'body must be valid JSON: UTF-8 text'
      )
    )
    return
  }
  const text = bytes.toString('utf8')
  if (text.trim() === '') {
    done(null, undefined)
    return
  }
  try {
    done(null, sjson.parse(text, FORBIDDEN))
    return
  } catch {
    // Told apart below, on this failure path only.
  }
  let value: unknown
  try {
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
  } catch {
    value = undefined
  }
  if (typeof value !== 'object' || value === null) {
    done(
      gatewayError(
        'VALIDATION_FAILED',
        { details: [{ field: 'body', rule: 'must be valid JSON' }] },
        'body must be valid JSON'
      )
    )
    return
  }
  let key = 'constructor.prototype'
  try {
    sjson.scan(value, { protoAction: 'error', constructorAction: 'ignore' })
  } catch {
    key = '__proto__'
  }
  const rule = `must not hold a ${key} key (refused, never merged into an object)`
  done(gatewayError('VALIDATION_FAILED', { details: [{ field: 'body', rule }] }, `body ${rule}`))
}
