import type { FastifyInstance } from 'fastify'
import { operationsOf } from '../catalogue/operations.ts'
import { errorResponses, UPSTREAM_STATUSES } from '../schemas/envelope.ts'
import { paramSchema } from '../schemas/params.ts'
import { TaxpayerBillsOfLadingResponseSchema } from '../schemas/composed.ts'
import { composedTag } from '../upstream/entity-tag.ts'
import { Type, type TypeBoxTypeProvider } from '../typebox.ts'
import { setCacheHeaders, wantsFresh } from './cache-headers.ts'
import { conditionalResponses, ConditionalHeadersSchema, notModified } from './conditional.ts'
import { failedSource, outcomeTag, settleAtMost } from './sources.ts'

/** The BL lists of the catalogue, one per customs document type. */
const BL_LISTS = operationsOf('bl-list')

/** GET /v1/taxpayers/{npwp}/bills-of-lading: the three BL lists at once (docs/api.md#routes). */
export default async function taxpayerRoutes (app: FastifyInstance) {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/v1/taxpayers/:npwp/bills-of-lading',
    {
      config: { scope: 'customs:read', hubOperations: BL_LISTS.map((op) => op.id) },
      schema: {
        tags: ['taxpayers'],
        summary: 'All bills of lading of a taxpayer',
        operationId: 'getTaxpayerBillsOfLading',
        description:
          'Asks the BC 1.6, BC 2.0 and BC 2.3 lists at once and merges them, each entry tagged ' +
          'with its `documentType`. ' +
          'A source that fails is reported in `meta.sources` (and `meta.complete` is false) ' +
          'while the others are returned; ' +
          'only when every source fails is the answer an error (that of the first source).',
        params: Type.Object({ npwp: paramSchema('npwp') }, { additionalProperties: false }),
        headers: ConditionalHeadersSchema,
        response: {
          ...conditionalResponses(TaxpayerBillsOfLadingResponseSchema),
          ...errorResponses(UPSTREAM_STATUSES)
        }
      }
    },
    async (request, reply) => {
      const { npwp } = request.params
      const fresh = wantsFresh(request)
      const settled = await settleAtMost(
        BL_LISTS.map(
          (op) => () => app.hub.call(request, { operation: op.id, params: { npwp }, fresh })
        ),
        app.config.UPSTREAM_MAX_CALLS_PER_CLIENT
      )

      const failures = settled.filter((r) => r.status === 'rejected')
      if (failures.length === settled.length) throw (failures[0] as PromiseRejectedResult).reason
      const { cached, stale } = setCacheHeaders(
        reply,
        settled.map((r) => (r.status === 'fulfilled' ? r.value.cache : undefined))
      )
      // Known before anything is merged: a 304 merges nothing.
      if (notModified(request, reply, composedTag(settled.map(outcomeTag)))) return reply

      const data: Array<Record<string, unknown>> = []
      const sources = settled.map((result, i) => {
        const op = BL_LISTS[i]!
        const base = { documentType: op.documentType.code, operation: op.id }
        if (result.status === 'fulfilled') {
          const items = result.value.data as Array<Record<string, unknown>>
          for (const item of items) data.push({ ...item, documentType: op.documentType.code })
          return { ...base, status: 'ok' as const, count: items.length }
        }
        return { ...base, ...failedSource(result.reason) }
      })
      return {
        data,
        meta: {
          count: data.length,
          cached: cached && failures.length === 0,
          ...(stale ? { stale } : {}),
          complete: failures.length === 0,
          sources
        }
      }
    }
  )
}
