import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { SCOPE_DESCRIPTIONS, SCOPES, SECURITY_SCHEME } from '../auth/scopes.ts'
import { ALL_RESOURCES } from '../mapping/resources.ts'
import { ErrorEnvelopeSchema } from '../schemas/envelope.ts'
import { BookedEventSchema } from '../schemas/events.ts'
import { resourceSchema } from '../schemas/resources.ts'

export const TAGS = [
  { name: 'customs', description: 'Customs lookups: bills of lading, BC 2.0 declarations, containers per document type' },
  { name: 'taxpayers', description: 'Everything of one taxpayer at once' },
  { name: 'sp2', description: 'SP2 (delivery order release) documents' },
  { name: 'bookings', description: 'Truck platform booking calls' },
  { name: 'events', description: 'Booked notifications over WebSocket' },
  { name: 'operations', description: 'Health, readiness, metrics' }
]

const DESCRIPTION = `A backend-for-frontend in front of the customs and logistics data hub.

One dialect everywhere: camelCase English names, booleans for the hub's 0/1 flags, ISO 8601 dates
(\`2024-03-01\`) and date-times with the hub's offset (\`2024-03-01T08:15:00.5+07:00\`).
Every success is \`{ "data": ..., "meta": { ... } }\` (lists carry \`meta.count\`); every failure is the
\`ErrorEnvelope\` with a stable \`code\`. Every response carries \`x-request-id\`.

Each field description names the hub field it comes from; the whole glossary is in \`docs/glossary.md\`.
Fields the hub adds beyond the documented ones are passed on with camelCased names.

Callers authenticate with a client key, \`Authorization: Bearer <client key>\` (Swagger UI: "Authorize").
Each /v1 route names the scope it needs; a missing or unknown key is 401 UNAUTHORIZED, a missing scope
403 FORBIDDEN. Each client has a rate limit (429 RATE_LIMITED with \`retry-after\` and \`x-ratelimit-*\`).
The writes accept an \`Idempotency-Key\` header; a replayed answer carries \`idempotent-replayed: true\`.`

/** Shared schemas, OpenAPI generation (3.1) and Swagger UI at /docs; the document at /openapi.json. */
async function openapi (app: FastifyInstance, { version }: { version: string }) {
  app.addSchema(ErrorEnvelopeSchema)
  app.addSchema(BookedEventSchema)
  for (const spec of ALL_RESOURCES) app.addSchema(resourceSchema(spec))

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Customs data gateway', version, description: DESCRIPTION, contact: { name: 'Customs gateway team' } },
      servers: [{ url: '/', description: 'This gateway' }],
      tags: TAGS,
      components: {
        securitySchemes: {
          [SECURITY_SCHEME]: {
            type: 'http',
            scheme: 'bearer',
            description: 'A client key of CLIENTS_FILE (README, Security). Scopes: ' +
              SCOPES.map(scope => `\`${scope}\` (${SCOPE_DESCRIPTIONS[scope]})`).join('; ') + '.'
          }
        }
      }
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}`
    }
  })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { deepLinking: true, tryItOutEnabled: true, displayRequestDuration: true }
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}

export default fp(openapi, { name: 'openapi' })
