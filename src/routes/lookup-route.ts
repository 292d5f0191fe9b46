import type { FastifyInstance } from 'fastify'
import type { OperationId } from '../catalogue/operations.ts'
import type { HubOperation, LookupRouteSpec } from '../catalogue/types.ts'
import {
  errorResponses,
  lookupListEnvelope,
  lookupRecordEnvelope,
  UPSTREAM_STATUSES
} from '../schemas/envelope.ts'
import { paramsObject } from '../schemas/params.ts'
import type { TypeBoxTypeProvider } from '../typebox.ts'
import { setCacheHeaders, wantsFresh } from './cache-headers.ts'
import { conditionalResponses, ConditionalHeadersSchema, notModified } from './conditional.ts'

/** A catalogue entry whose route is a lookup. */
export type LookupOperation = HubOperation & { id: OperationId, route: LookupRouteSpec }

/**
 * The GET route of one hub lookup, as its catalogue entry describes it: it
 * declares its scope, its schemas come from the operation's parameters and
 * item spec, its answer is the normalized data.
 */
export function registerLookup (app: FastifyInstance, op: LookupOperation) {
  const { route } = op
  const inPath = new Set(route.pathParams ?? [])
  const isList = op.response.type !== 'record'
  const itemId = op.response.item.id
  // The parameters as the hub profile in force takes them: which, and which go in the hub's path.
  const params = app.hub.operations.get(op.id)!.params
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    route.url,
    {
      config: { scope: route.scope, hubOperations: [op.id] },
      schema: {
        tags: [route.tag],
        summary: route.summary,
        description: route.description,
        operationId: operationId(route.url),
        // Always declared (empty when the path has none), so that the handler's type of it is the
        // schema's.
        params: paramsObject(
          params.filter((p) => inPath.has(p.name)),
          { examples: route.examples }
        ),
        querystring: paramsObject(
          params.filter((p) => !inPath.has(p.name)),
          { examples: route.examples }
        ),
        headers: ConditionalHeadersSchema,
        response: {
          ...conditionalResponses(
            isList
              ? lookupListEnvelope(itemId, `The ${itemId} items`)
              : lookupRecordEnvelope(itemId, `The ${itemId}`)
          ),
          ...errorResponses(UPSTREAM_STATUSES)
        }
      }
    },
    async (request, reply) => {
      const params = { ...request.params, ...request.query }
      const result = await app.hub.call(request, {
        operation: op.id,
        params,
        fresh: wantsFresh(request)
      })
      const meta = setCacheHeaders(reply, [result.cache])
      if (notModified(request, reply, result.etag)) return reply
      // The data is already our JSON (transcoded from the hub's bytes, or
      // normalized and serialized once per hub answer), and the envelope around
      // it is written once per answer and meta: nothing is serialized here.
      return reply.type('application/json; charset=utf-8').send(result.envelope(meta))
    }
  )
}

/**
 * A stable camelCase operationId from the route (`/v1/customs/bc20/containers` ->
 * `getCustomsBc20Containers`).
 */
export function operationId (url: string, method = 'get'): string {
  const words = url.split('/').filter(w => w !== '' && w !== 'v1').map(w => w.replace(/^:/, 'by-'))
  return (
    method +
    words
      .map((w) =>
        w
          .split('-')
          .map((p) => p.charAt(0).toUpperCase() + p.slice(1))
          .join('')
      )
      .join('')
  )
}
