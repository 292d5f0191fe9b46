import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { errorResponses, recordEnvelope, UPSTREAM_STATUSES } from '../schemas/envelope.ts'
import { PARAM_SCHEMAS } from '../schemas/params.ts'
import { Type } from '../schemas/typebox.ts'
import { toUpstreamFinalization, writeAnswer } from '../mapping/request-bodies.ts'
import { OPTIONAL_BODY } from '../plugins/swagger.ts'
import { registerLookup } from './lookup-route.ts'

/** The finalization takes no fields: an empty body or `{}`. */
export const FinalizationBodySchema = Type.Object({}, { additionalProperties: false, title: 'Finalization (no fields)', description: 'No fields: send no body, or `{}`' })

/** SP2 documents (contract.md 3). */
export default async function sp2Routes (app: FastifyInstance) {
  registerLookup(app, {
    url: '/v1/sp2/documents',
    operation: 'document_sp2/host-to-host',
    tag: 'sp2',
    summary: 'SP2 documents of a cargo owner',
    description: 'The SP2 documents of a cargo owner for a bill of lading, with their customs document, platform, containers and status log, normalized all the way down.'
  })

  registerLookup(app, {
    url: '/v1/sp2/containers',
    operation: 'document_sp2_container/cargo_owner',
    tag: 'sp2',
    summary: 'Containers of a cargo owner\'s SP2 document',
    description: 'The SP2 container records of one container of a cargo owner\'s bill of lading.'
  })

  app.withTypeProvider<TypeBoxTypeProvider>().post('/v1/sp2/documents/:sp2Id/finalization', {
    config: { hubOperations: ['document_sp2/final'] },
    schema: {
      tags: ['sp2'],
      summary: 'Finalize an SP2 document',
      operationId: 'postSp2DocumentFinalization',
      description: 'Asks the hub to finalize an SP2 document. It takes no body: send none, or `{}`. Never retried automatically.',
      params: Type.Object({ sp2Id: PARAM_SCHEMAS.sp2Id }, { additionalProperties: false }),
      body: FinalizationBodySchema,
      [OPTIONAL_BODY]: true,
      response: { 200: recordEnvelope('FinalizationAnswer', 'The finalization, as the hub accepted it'), ...errorResponses([...UPSTREAM_STATUSES, 413, 415]) }
    },
    // No body at all is the same as `{}`; JSON `null`, arrays and fields are refused by the schema.
    preValidation: async (request) => {
      if (request.body === undefined) request.body = {}
    }
  }, async (request, reply) => {
    const { sp2Id } = request.params
    const { data } = await app.hub.call(request, { operation: 'document_sp2/final', body: toUpstreamFinalization(sp2Id) })
    reply.header('cache-control', 'no-store')
    const finished = (data as { finished?: unknown }).finished
    return { data: writeAnswer({ sp2Id, finished: typeof finished === 'boolean' ? finished : true }, data), meta: {} }
  })
}
