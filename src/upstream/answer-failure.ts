import { gatewayError } from '../errors.ts'
import { statusFailure } from './failures.ts'
import { hubText, pick } from './hub-message.ts'
import { lacksData } from './reference-path.ts'
import type { ResolvedOperation } from './resolve-operations.ts'

/**
 * A 2xx answer that reports a failure: the error it is answered as, or `empty` (no data: an empty
 * list).
 */
export type ReportedFailure = { empty: true } | { empty: false, error: Error }

/**
 * Whether a parsed 2xx answer reports a failure, as the profile in force
 * recognises one (`failure`): a status member that is not a success, or an
 * error text and no data. The failure is answered as the status it names,
 * the code of the first rule its text matches, or the profile's `otherwise`;
 * its text, scrubbed of `secrets`, is passed on as `upstreamMessage`.
 */
export function reportedFailure (
  op: ResolvedOperation,
  parsed: unknown,
  secrets: readonly string[]
): ReportedFailure | undefined {
  const rules = op.failure
  if (
    rules === undefined ||
    parsed === null ||
    typeof parsed !== 'object' ||
    Array.isArray(parsed)
  ) {
    return undefined
  }
  const status = rules.statusField === undefined ? undefined : pick(parsed, rules.statusField)
  const statusFailed =
    status !== undefined &&
    status !== null &&
    !rules.successValues.has(String(status).trim().toLowerCase())
  const found = hubText(parsed, op.errorFields, secrets)
  if (
    !statusFailed &&
    !(rules.messageWithoutData && found !== undefined && lacksData(op, parsed))
  ) {
    return undefined
  }
  const upstreamMessage = found?.text
  const extras = {
    upstreamStatus: 200,
    ...(upstreamMessage === undefined ? {} : { upstreamMessage })
  }
  const reported =
    rules.statusCodeField === undefined ? undefined : Number(pick(parsed, rules.statusCodeField))
  if (reported !== undefined && Number.isInteger(reported) && reported >= 400 && reported <= 599) {
    return { empty: false, error: statusFailure(reported, upstreamMessage, undefined) }
  }
  const text = upstreamMessage ?? (statusFailed ? String(status) : '')
  const code = rules.codes.find((rule) => rule.match.test(text))?.code ?? rules.otherwise
  if (code === 'EMPTY') {
    return op.response.type === 'record'
      ? { empty: false, error: gatewayError('UPSTREAM_NOT_FOUND', extras) }
      : { empty: true }
  }
  return {
    empty: false,
    error: gatewayError(
      code,
      code === 'UPSTREAM_REJECTED' ? { ...extras, statusCode: 422 } : extras
    )
  }
}
