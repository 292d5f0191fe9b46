import type { FastifyInstance } from 'fastify'
import { operationsOf } from '../catalogue/operations.ts'
import { gatewayError, isGatewayError } from '../errors.ts'
import { errorResponses, UPSTREAM_STATUSES } from '../schemas/envelope.ts'
import { PARAM_SCHEMAS } from '../schemas/params.ts'
import { Type, type TypeBoxTypeProvider } from '../schemas/typebox.ts'
import { setCacheHeaders, wantsFresh } from './cache-headers.ts'

/** The BL lists of the catalogue, one per customs document type. */
const BL_LISTS = operationsOf('bl-list')
const DOCUMENT_TYPES = BL_LISTS.map(op => op.documentType.code)

export const TaxpayerBillOfLadingSchema = Type.Intersect([
  Type.Ref('BillOfLading'),
  Type.Object({ documentType: Type.Enum(DOCUMENT_TYPES, { description: 'Customs document type of the list the entry came from' }) })
], { $id: 'TaxpayerBillOfLading', title: 'Bill of lading of a taxpayer, tagged with its document type' })

const SourceSchema = Type.Object({
  documentType: Type.Enum(DOCUMENT_TYPES, { description: 'Customs document type' }),
  operation: Type.String({ description: 'The hub operation asked' }),
  status: Type.Enum(['ok', 'failed'], { description: 'Whether this source answered' }),
  count: Type.Optional(Type.Integer({ minimum: 0, description: 'Entries from this source' })),
  code: Type.Optional(Type.String({ description: 'Error code of a failed source' })),
  message: Type.Optional(Type.String({ description: 'Error message of a failed source' })),
  upstreamMessage: Type.Optional(Type.String({ description: 'The hub\'s own message, when it answered a 4xx with one' }))
}, { additionalProperties: false })

const ResponseSchema = Type.Object({
  data: Type.Array(Type.Ref('TaxpayerBillOfLading')),
  meta: Type.Object({
    count: Type.Integer({ minimum: 0, description: 'Number of items in `data`' }),
    cached: Type.Boolean({ description: 'True when every source was answered from the gateway\'s cache' }),
    stale: Type.Optional(Type.Boolean({ description: 'True when a source\'s hub call failed and a stale cached answer was used' })),
    complete: Type.Boolean({ description: 'False when a source failed and its entries are missing' }),
    sources: Type.Array(SourceSchema, { description: 'One entry per BL list asked, in order' })
  }, { additionalProperties: false })
}, { additionalProperties: false })

/** GET /v1/taxpayers/{npwp}/bills-of-lading: the three BL lists at once (contract.md 3). */
export default async function taxpayerRoutes (app: FastifyInstance) {
  app.addSchema(TaxpayerBillOfLadingSchema)

  app.withTypeProvider<TypeBoxTypeProvider>().get('/v1/taxpayers/:npwp/bills-of-lading', {
    config: { scope: 'customs:read', hubOperations: BL_LISTS.map(op => op.id) },
    schema: {
      tags: ['taxpayers'],
      summary: 'All bills of lading of a taxpayer',
      operationId: 'getTaxpayerBillsOfLading',
      description: 'Asks the BC 1.6, BC 2.0 and BC 2.3 lists at once and merges them, each entry tagged with its `documentType`. ' +
        'A source that fails is reported in `meta.sources` (and `meta.complete` is false) while the others are returned; ' +
        'only when every source fails is the answer an error (that of the first source).',
      params: Type.Object({ npwp: PARAM_SCHEMAS.npwp }, { additionalProperties: false }),
      response: { 200: ResponseSchema, ...errorResponses(UPSTREAM_STATUSES) }
    }
  }, async (request, reply) => {
    const { npwp } = request.params
    const fresh = wantsFresh(request)
    const settled = await Promise.allSettled(BL_LISTS.map(op =>
      app.hub.call(request, { operation: op.id, params: { npwp }, fresh })))

    const data: Array<Record<string, unknown>> = []
    const sources = settled.map((result, i) => {
      const op = BL_LISTS[i]!
      const base = { documentType: op.documentType.code, operation: op.id }
      if (result.status === 'fulfilled') {
        const items = result.value.data as Array<Record<string, unknown>>
        for (const item of items) data.push({ ...item, documentType: op.documentType.code })
        return { ...base, status: 'ok' as const, count: items.length }
      }
      const error = isGatewayError(result.reason) ? result.reason : gatewayError('INTERNAL')
      return {
        ...base,
        status: 'failed' as const,
        code: error.code,
        message: error.message,
        ...(error.upstreamMessage === undefined ? {} : { upstreamMessage: error.upstreamMessage })
      }
    })
    const failures = settled.filter(r => r.status === 'rejected')
    if (failures.length === settled.length) throw (failures[0] as PromiseRejectedResult).reason
    const { cached, stale } = setCacheHeaders(reply, settled.map(r => r.status === 'fulfilled' ? r.value.cache : undefined))
    return { data, meta: { count: data.length, cached: cached && failures.length === 0, ...(stale ? { stale } : {}), complete: failures.length === 0, sources } }
  })
}
