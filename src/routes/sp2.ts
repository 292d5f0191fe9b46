import type { FastifyInstance } from 'fastify'
import { PARAM_SCHEMAS } from '../schemas/params.ts'
import { Type } from '../typebox.ts'
import { toUpstreamFinalization, writeAnswer } from '../mapping/request-bodies.ts'
import { OPTIONAL_BODY } from './route-config.ts'
import { registerWrite } from './write-route.ts'

/** The finalization takes no fields: an empty body or `{}`. */
export const FinalizationBodySchema = Type.Object(
  {},
  {
    additionalProperties: false,
    title: 'Finalization (no fields)',
    description: 'No fields: send no body, or `{}`'
  }
)

/** The SP2 finalization; the SP2 lookups are served from the catalogue (lookups.ts). */
export default async function sp2Routes (app: FastifyInstance) {
  registerWrite(app, {
    operation: 'document_sp2/final',
    params: Type.Object({ sp2Id: PARAM_SCHEMAS.sp2Id }, { additionalProperties: false }),
    body: FinalizationBodySchema,
    schema: { [OPTIONAL_BODY]: true },
    // No body at all is the same as `{}`; JSON `null`, arrays and fields are refused by the schema.
    preValidation: async (request) => {
      if (request.body === undefined) request.body = {}
    },
    async handler (request, hub) {
      const { sp2Id } = request.params
      const data = await hub({ params: { sp2Id }, body: toUpstreamFinalization(sp2Id) })
      const finished = (data as { finished?: unknown }).finished
      return writeAnswer({ sp2Id, finished: typeof finished === 'boolean' ? finished : true }, data)
    }
  })
}
