import type { FastifyInstance } from 'fastify'
import { OPERATIONS } from '../catalogue/operations.ts'
import type { HubOperation } from '../catalogue/types.ts'
import { registerLookup, type LookupOperation } from './lookup-route.ts'

function isLookup (op: HubOperation): op is LookupOperation {
  return op.route.method === 'GET'
}

/**
 * One GET route per hub lookup of the catalogue (BL lists, declarations,
 * container lists, SP2 lookups), in catalogue order: a lookup added to the
 * catalogue is served here with nothing else to write.
 */
export default async function lookupRoutes (app: FastifyInstance) {
  for (const op of OPERATIONS) if (isLookup(op)) registerLookup(app, op)
}
