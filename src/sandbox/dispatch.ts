import { message } from './answer.ts'
import type { Answer } from './answer.ts'
import type { SandboxConfig } from './config.ts'
import type { OperationContext, RequestBody } from './context.ts'
import type { Dataset } from './data.ts'
import { applyFault } from './fault-answers.ts'
import { detectFault, stringsOf, type FaultName } from './faults.ts'
import { OPERATIONS } from './operations.ts'
import type { Operation } from './operations.ts'
import { matchRoute } from './router.ts'

export interface IncomingRequest {
  method: string
  /** Raw path, query string removed, not decoded. */
  path: string
  query: URLSearchParams
  headers: Record<string, string | string[] | undefined>
  body: RequestBody
}

export interface Decision {
  /** Operation name, 'unknown' when no address matched. */
  operation: string
  params: Record<string, string>
  answer: Answer
  /** Delay on top of the configured latency (the SLOW fault). */
  extraDelayMs: number
  /** The fault played, when one was (a magic value, or `Sandbox.fault`). */
  fault?: FaultName
}

/** Path segments fill the parameters in table order; the query string fills the rest. */
function resolveParams (operation: Operation, segments: string[], query: URLSearchParams): Record<string, string> {
  const params: Record<string, string> = {}
  const placeable = operation.params.filter((p) => p.inPath)
  for (const param of operation.params) {
    const index = placeable.indexOf(param)
    const fromPath = index >= 0 ? segments[index] : undefined
    const value = fromPath !== undefined && fromPath !== '' ? fromPath : query.get(param.name)
    if (value !== null && value !== undefined) params[param.name] = value
  }
  return params
}

/** 401 when a header the operation requires is missing or wrong (interface.md 5). */
function authenticate (operation: Operation, headers: IncomingRequest['headers'], config: SandboxConfig): Answer | undefined {
  if (operation.auth.apiKey && headers[config.apiKeyHeader] !== config.apiKey) return message(401, 'Invalid API key')
  if (operation.auth.token && !config.tokens.accepts(headers.authorization)) return message(401, 'Unauthorized')
  return undefined
}

function validateParams (operation: Operation, params: Record<string, string>): Answer | undefined {
  for (const param of operation.params) {
    const value = params[param.name]
    if (value === undefined || value === '') return message(400, `Parameter ${param.name} wajib diisi`)
    if (param.format === 'date' && !/^\d{8}$/.test(value)) return message(400, `Parameter ${param.name} harus berformat YYYYMMDD`)
  }
  return undefined
}

/**
 * Decides the answer to one request, in the order a real gateway would:
 * address, method, credentials, then faults, then parameters and the handler.
 */
export function decide (request: IncomingRequest, config: SandboxConfig, dataset: Dataset): Decision {
  const match = matchRoute(request.path, config.pathSegment, OPERATIONS)
  if (match === undefined) {
    return { operation: 'unknown', params: {}, answer: message(404, 'Not Found'), extraDelayMs: 0 }
  }
  const { operation, segments } = match
  const params = resolveParams(operation, segments, request.query)
  const decision = (answer: Answer, extraDelayMs = 0): Decision => ({ operation: operation.name, params, answer, extraDelayMs })

  if (request.method !== operation.method) {
    return decision(message(405, 'Method Not Allowed', { allow: operation.method }))
  }
  const denied = authenticate(operation, request.headers, config)
  if (denied !== undefined) return decision(denied)

  const normal = (): Answer => {
    const invalid = validateParams(operation, params)
    if (invalid !== undefined) return invalid
    const ctx: OperationContext = { params, body: request.body, dataset, config }
    return operation.handle(ctx)
  }

  const values = [
    ...segments,
    ...Array.from(request.query.values()),
    ...(request.body.kind === 'json' ? stringsOf(request.body.value) : [])
  ]
  const fault = config.fault ?? detectFault(values)
  if (fault === undefined) return decision(normal())
  const outcome = applyFault(fault, operation.shape, normal, config.slowMs)
  return { ...decision(outcome.answer, outcome.extraDelayMs), fault }
}
