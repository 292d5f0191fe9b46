import type { FastifyInstance } from 'fastify'
import { errorResponses, listEnvelope, recordEnvelope, UPSTREAM_STATUSES } from '../schemas/envelope.ts'
import { paramsObject } from '../schemas/params.ts'
import type { OperationId } from '../upstream/operations.ts'
import { operation, upstreamDescription } from './describe.ts'

export interface LookupRoute {
  url: string
  operation: OperationId
  /** Parameters taken from the path; the others come from the query string. */
  pathParams?: string[]
  tag: string
  summary: string
  description: string
}

/**
 * A GET route that answers one hub lookup: its schemas come from the
 * operation's parameters and item spec, its answer is the normalized data.
 */
export function registerLookup (app: FastifyInstance, route: LookupRoute) {
  const op = operation(route.operation)
  const inPath = new Set(route.pathParams ?? [])
  const isList = op.response.type !== 'record'
  const itemId = op.response.item.id
  app.get(route.url, {
    schema: {
      tags: [route.tag],
      summary: route.summary,
      description: `${route.description}\n\n${upstreamDescription(op)}`,
      operationId: operationId(route.url),
      ...(inPath.size > 0 ? { params: paramsObject(op.params.filter(p => inPath.has(p.name))) } : {}),
      querystring: paramsObject(op.params.filter(p => !inPath.has(p.name))),
      response: {
        200: isList ? listEnvelope(itemId, `The ${itemId} items`) : recordEnvelope(itemId, `The ${itemId}`),
        ...errorResponses(UPSTREAM_STATUSES)
      }
    }
  }, async (request) => {
    const params = { ...(request.params as Record<string, string>), ...(request.query as Record<string, string>) }
    const { data } = await app.hub.call({ operation: op.id as OperationId, params, requestId: request.id, log: request.log })
    return Array.isArray(data) ? { data, meta: { count: data.length } } : { data, meta: {} }
  })
}

/** A stable camelCase operationId from the route (`/v1/customs/bc20/containers` -> `getCustomsBc20Containers`). */
export function operationId (url: string, method = 'get'): string {
  const words = url.split('/').filter(w => w !== '' && w !== 'v1').map(w => w.replace(/^:/, 'by-'))
  return method + words.map(w => w.split('-').map(p => p.charAt(0).toUpperCase() + p.slice(1)).join('')).join('')
}
