import { message } from './answer.ts'
import type { Answer } from './answer.ts'
import type { SandboxConfig } from './config.ts'
import type { OperationContext, RequestBody } from './context.ts'
import type { Dataset } from './data.ts'
import { applyFault } from './fault-answers.ts'
import { detectFault, stringsOf, type FaultName } from './faults.ts'
import type { HubModel, Routed } from './hub-model.ts'

export interface IncomingRequest {
  method: string
  /** Raw path, query string removed, not decoded. */
  path: string
  query: URLSearchParams
  headers: Record<string, string | string[] | undefined>
  body: RequestBody
  /** The body was over the limit (and not read in full). */
  tooLarge: boolean
}

export interface Decision {
  /** Operation name, 'unknown' when no address matched. */
  operation: string
  params: Record<string, string>
  values: Routed['values']
  answer: Answer
  /** Delay on top of the configured latency (the SLOW fault). */
  extraDelayMs: number
  /** The fault played, when one was (a magic value, or `Sandbox.fault`). */
  fault?: FaultName
}

/**
 * Decides the answer to one request, in the order a real gateway would:
 * address, body size, method, credentials, then faults, then parameters and
 * the handler.
 */
export function decide (
  request: IncomingRequest,
  config: SandboxConfig,
  dataset: Dataset,
  model: HubModel
): Decision {
  const routed = model.route(request.path, request.query)
  if (routed === undefined) {
    return {
      operation: 'unknown',
      params: {},
      values: {},
      answer: model.finish(message(404, 'Not Found')),
      extraDelayMs: 0
    }
  }
  const { operation, segments, params, values } = routed
  const decision = (answer: Answer, extraDelayMs = 0): Decision => ({
    operation: operation.name,
    params,
    values,
    answer: model.finish(answer, operation),
    extraDelayMs
  })

  if (request.tooLarge) return decision(message(413, 'Payload Too Large'))
  if (request.method !== operation.method) {
    return decision(message(405, 'Method Not Allowed', { allow: operation.method }))
  }
  const denied = model.authenticate(operation, request.headers)
  if (denied !== undefined) return decision(denied)

  const normal = (): Answer => {
    const invalid = model.validate(routed)
    if (invalid !== undefined) return invalid
    const ctx: OperationContext = { params, values, body: request.body, dataset, config }
    return model.present(operation, operation.handle(ctx))
  }

  const given = [
    ...segments,
    ...Array.from(request.query.values()),
    ...(request.body.kind === 'json' ? stringsOf(request.body.value) : [])
  ]
  const fault = config.fault ?? detectFault(given)
  if (fault === undefined) return decision(normal())
  const outcome = applyFault(
    fault,
    model.shape(operation),
    normal,
    config.slowMs,
    model.report(operation)
  )
  return { ...decision(outcome.answer, outcome.extraDelayMs), fault }
}
