import { message } from './answer.ts'
import type { Answer } from './answer.ts'
import type { SandboxConfig } from './config.ts'
import type { Headers, HubModel, Routed } from './hub-model.ts'
import type { Operation } from './operations.ts'
import { OPERATIONS } from './operations.ts'
import { matchRoute } from './router.ts'

// The hub as the sandbox reads its description when no profile is given:
// lenient where the description is silent (parameters in the path or the
// query string, development and production prefixes), `{"message": ...}`
// errors, the description's keys and forms (docs/hub.md#the-sandbox).

/** Path segments fill the parameters in table order; the query string fills the rest. */
function resolveParams (operation: Operation, segments: string[], query: URLSearchParams): Pick<Routed, 'params' | 'values'> {
  const params: Routed['params'] = {}
  const values: Routed['values'] = {}
  const placeable = operation.params.filter((p) => p.inPath)
  for (const param of operation.params) {
    const index = placeable.indexOf(param)
    const fromPath = index >= 0 ? segments[index] : undefined
    const value = fromPath !== undefined && fromPath !== '' ? fromPath : query.get(param.name)
    if (value !== null && value !== undefined) {
      params[param.name] = value
      values[param.kind] = value
    }
  }
  return { params, values }
}

const REPORT = { status: 'status', text: 'message', authText: 'message' }

export function defaultModel (config: SandboxConfig): HubModel {
  return {
    route (path, query) {
      const match = matchRoute(path, config.pathSegment, OPERATIONS)
      if (match === undefined) return undefined
      return { operation: match.operation, segments: match.segments, ...resolveParams(match.operation, match.segments, query) }
    },
    /** 401 when a header the operation requires is missing or wrong. */
    authenticate (operation: Operation, headers: Headers): Answer | undefined {
      if (operation.auth.apiKey && headers[config.apiKeyHeader] !== config.apiKey) return message(401, 'Invalid API key')
      if (operation.auth.token && !config.tokens.accepts(headers.authorization)) return message(401, 'Unauthorized')
      return undefined
    },
    validate ({ operation, params }) {
      for (const param of operation.params) {
        const value = params[param.name]
        if (value === undefined || value === '') return message(400, `Parameter ${param.name} wajib diisi`)
        if (param.format === 'date' && !/^\d{8}$/.test(value)) return message(400, `Parameter ${param.name} harus berformat YYYYMMDD`)
      }
      return undefined
    },
    present: (_operation, answer) => answer,
    shape: (operation) => operation.shape,
    report: () => REPORT,
    finish: (answer) => answer
  }
}
