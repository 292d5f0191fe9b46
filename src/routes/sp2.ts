import type { FastifyInstance } from 'fastify'
import { PARAM_SCHEMAS } from '../schemas/params.ts'
import { Type } from '../schemas/typebox.ts'
import { toUpstreamFinalization, writeAnswer } from '../mapping/request-bodies.ts'
import { OPTIONAL_BODY } from '../plugins/swagger.ts'
import { registerLookup } from './lookup-route.ts'
import { registerWrite } from './write-route.ts'

/** The finalization takes no fields: an empty body or `{}`. */
export const FinalizationBodySchema = Type.Object({}, { additionalProperties: false, title: 'Finalization (no fields)', description: 'No fields: send no body, or `{}`' })

/** SP2 documents (contract.md 3). */
export default async function sp2Routes (app: FastifyInstance) {
  registerLookup(app, {
    url: '/v1/sp2/documents',
    scope: 'sp2:read',
    operation: 'document_sp2/host-to-host',
    tag: 'sp2',
    summary: 'SP2 documents of a cargo owner',
    description: 'The SP2 documents of a cargo owner for a bill of lading, with their customs document, platform, containers and status log, normalized all the way down.'
  })

  registerLookup(app, {
    url: '/v1/sp2/containers',
    scope: 'sp2:read',
    operation: 'document_sp2_container/cargo_owner',
    tag: 'sp2',
    summary: 'Containers of a cargo owner\'s SP2 document',
    description: 'The SP2 container records of one container of a cargo owner\'s bill of lading.'
  })

  registerWrite(app, {
    url: '/v1/sp2/documents/:sp2Id/finalization',
    scope: 'sp2:finalize',
    operation: 'document_sp2/final',
    idParam: 'sp2Id',
    tag: 'sp2',
    summary: 'Finalize an SP2 document',
    operationId: 'postSp2DocumentFinalization',
    description: 'Asks the hub to finalize an SP2 document. It takes no body: send none, or `{}`. Never retried automatically.',
    params: Type.Object({ sp2Id: PARAM_SCHEMAS.sp2Id }, { additionalProperties: false }),
    body: FinalizationBodySchema,
    schema: { [OPTIONAL_BODY]: true },
    answer: { itemId: 'FinalizationAnswer', description: 'The finalization, as the hub accepted it' },
    // No body at all is the same as `{}`; JSON `null`, arrays and fields are refused by the schema.
    preValidation: async (request) => {
      if (request.body === undefined) request.body = {}
    },
    async handler (request, hub) {
      const { sp2Id } = request.params
      const data = await hub({ body: toUpstreamFinalization(sp2Id) })
      const finished = (data as { finished?: unknown }).finished
      return writeAnswer({ sp2Id, finished: typeof finished === 'boolean' ? finished : true }, data)
    }
  })
}
