import type { FastifyInstance } from 'fastify'
import { BL_LIST_ROUTES, CONTAINER_ROUTES } from './document-types.ts'
import { CONTAINER_EXAMPLES } from '../schemas/examples.ts'
import { registerLookup } from './lookup-route.ts'

/** Customs lookups (contract.md 3): BL lists, BC 2.0 declarations, containers per document type. */
export default async function customsRoutes (app: FastifyInstance) {
  for (const route of BL_LIST_ROUTES) {
    registerLookup(app, {
      url: `/v1/customs/${route.type}/bills-of-lading`,
      scope: 'customs:read',
      operation: route.operation,
      tag: 'customs',
      summary: `${route.label} bills of lading of a taxpayer`,
      description: `Lists the ${route.label} bills of lading registered for a taxpayer (NPWP). An empty list is a 200 with \`data: []\`.`
    })
  }

  registerLookup(app, {
    url: '/v1/customs/bc20/declarations/:pibNo',
    scope: 'customs:read',
    operation: 'BC20ByNoPib',
    pathParams: ['pibNo'],
    tag: 'customs',
    summary: 'BC 2.0 declaration by PIB number',
    description: 'One BC 2.0 import declaration (PIB) of a taxpayer. UPSTREAM_NOT_FOUND when the hub does not know it.'
  })

  registerLookup(app, {
    url: '/v1/customs/bc20/declarations',
    scope: 'customs:read',
    operation: 'BC20ByNoBL',
    tag: 'customs',
    summary: 'BC 2.0 declarations by bill of lading',
    description: 'The BC 2.0 import declarations filed against a bill of lading.'
  })

  for (const route of CONTAINER_ROUTES) {
    registerLookup(app, {
      url: `/v1/customs/${route.type}/containers`,
      scope: 'customs:read',
      operation: route.operation,
      tag: 'customs',
      summary: `Containers of a ${route.label} document`,
      examples: CONTAINER_EXAMPLES[route.type],
      description: `Lists the containers of a ${route.label} bill of lading. The route takes exactly the parameters the hub's operation takes. The hub's list key is not ours to keep: the list is always under \`data\`.`
    })
  }
}
