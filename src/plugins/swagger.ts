import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { SCOPE_DESCRIPTIONS, SCOPES, scopesOf, SECURITY_SCHEME } from '../catalogue/scopes.ts'
import { ALL_RESOURCES } from '../catalogue/resources.ts'
import { OPTIONAL_BODY } from '../routes/route-config.ts'
import ANSWER_EXAMPLES from '../schemas/answer-examples.json' with { type: 'json' }
import { ErrorEnvelopeSchema, withErrorExamples } from '../schemas/envelope.ts'
import { errorEnvelope, errorExampleComponents, errorExamples } from '../schemas/error-examples.ts'
import { COMPOSED_SCHEMAS } from '../schemas/composed.ts'
import { EVENT_SCHEMAS } from '../schemas/events.ts'
import { resourceSchema } from '../schemas/resource-schemas.ts'

/**
 * What the gateway answered each operation on the sandbox, by operationId and
 * status: `npm run openapi` records it (scripts/docs/openapi-document.ts) from the
 * sandbox's seeded data, and a test fails when it differs from what the
 * gateway answers now.
 */
export type AnswerExamples = Record<string, Partial<Record<'200' | '400', unknown>>>

export const TAGS = [
  { name: 'customs', description: 'Customs lookups: bills of lading, BC 2.0 declarations, containers per document type' },
  { name: 'taxpayers', description: 'Everything of one taxpayer at once' },
  { name: 'shipments', description: 'Everything of one bill of lading at once' },
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

A day is \`YYYY-MM-DD\` in the hub's calendar on every route (\`blDate\` of a BL list is what the container and
SP2 lookups take); where the hub sends a time of day with it, that is kept as well, under the same name with
\`Time\` (\`blDateTime\`). Each field description names the hub field it comes from; the glossary of the
repository (\`docs/reference/glossary.md\`) maps every hub name to ours. Every item is closed
(\`additionalProperties: false\`):
fields the hub adds beyond the documented ones are kept, camelCased, under the item's \`hubExtra\`, which is present
only when the hub sent such fields; a field the hub always sends is required. The examples are real answers of the
built-in sandbox hub.

The lookups (every GET under /v1 but the events) answer with an \`ETag\`: a strong tag of the answer's \`data\`
(\`meta\` is not part of it). Send it back in \`If-None-Match\` and, while the data is the same, the answer is
304 Not Modified without a body: from the gateway's cache without a call to the hub while the cached answer is
fresh, after asking the hub otherwise. A request's \`cache-control: no-cache\` (or \`no-store\`, or
\`Pragma: no-cache\`) always asks the hub afresh, and its fresh answer is then compared: a 304 still spares the
body. Note that \`fetch()\` adds \`cache-control: no-cache\` to a request carrying its own \`If-None-Match\`;
send it with \`cache: 'no-cache'\` (fetch then sends \`max-age=0\`, which the gateway does not read) to be
answered from the cache. The typed client does so.

Request bodies are taken exactly as sent, never converted (\`"price": "15"\` is a 400). A validation error lists
every problem of the request in \`details\` (at most 20), each naming the field (\`query.npwp\`, \`body.price\`)
and the rule. A known path asked with another method is 405 METHOD_NOT_ALLOWED with \`Allow\`; \`HEAD\` works
wherever \`GET\` does.

Callers authenticate with a client key, \`Authorization: Bearer <client key>\` (Swagger UI: "Authorize").
Each /v1 route names the scope it needs; a missing or unknown key is 401 UNAUTHORIZED, a missing scope
403 FORBIDDEN. Each client has a rate limit (429 RATE_LIMITED with \`retry-after\` and \`x-ratelimit-*\`).
The writes accept an \`Idempotency-Key\` header; a replayed answer carries \`idempotent-replayed: true\`.`

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * A route's examples: its recorded sandbox answer under 200, its own 400
 * VALIDATION_FAILED, a 403 naming its scope. New objects, never mutated:
 * Fastify's automatic HEAD route shares the GET route's originals.
 */
function withExamples (route: RouteOptions): void {
  const id = route.schema?.operationId
  const response = route.schema?.response
  if (typeof id !== 'string' || !isObject(response)) return
  const recorded = (ANSWER_EXAMPLES as AnswerExamples)[id] ?? {}
  const next: Record<string, unknown> = { ...response }
  const ok = next[200]
  if (recorded[200] !== undefined && isObject(ok)) next[200] = { ...ok, examples: [recorded[200]] }
  const write = route.config?.write !== undefined
  const bad = next[400]
  if (isObject(bad) && isObject(recorded[400])) {
    next[400] = withErrorExamples(bad, errorExamples(400, { write, own: { VALIDATION_FAILED: recorded[400] } }))
  }
  const forbidden = next[403]
  const scope = route.config?.scope
  if (isObject(forbidden) && scope != null) {
    // A route needing several scopes: the example names the last, as a client holding the others would be told.
    const named = scopesOf(scope).at(-1)
    next[403] = withErrorExamples(forbidden, errorExamples(403, { own: { FORBIDDEN: errorEnvelope({ code: 'FORBIDDEN', args: [named], summary: '' }) } }))
  }
  route.schema = { ...route.schema, response: next }
}

/**
 * @fastify/swagger marks every request body required; a route that takes
 * none as well (OPTIONAL_BODY) gets `required: false`, so that a client
 * generated from the document may send nothing.
 */
function optionalBodies<T extends object> (openapiObject: T): T {
  const paths = (openapiObject as { paths?: unknown }).paths
  if (!isObject(paths)) return openapiObject
  for (const item of Object.values(paths)) {
    if (!isObject(item)) continue
    for (const op of Object.values(item)) {
      if (!isObject(op) || op[OPTIONAL_BODY] !== true) continue
      delete op[OPTIONAL_BODY]
      if (isObject(op.requestBody)) op.requestBody.required = false
    }
  }
  return openapiObject
}

/** What the security scheme says: the client keys and their scopes. */
const KEY_DESCRIPTION = 'A client key, issued by the gateway\'s operators. Scopes: ' +
  SCOPES.map(scope => `\`${scope}\` (${SCOPE_DESCRIPTIONS[scope]})`).join('; ') + '.'

/** Said first, in Swagger UI's Authorize dialog too, where authentication is off. */
export const KEYLESS_NOTE = 'No key is needed here: this gateway fronts the built-in sandbox with client authentication off ' +
  '(no CLIENTS_FILE), so every route answers without one and Authorize can be left empty. Where authentication is on: '

export interface OpenapiOptions {
  version: string
  /** Authentication is off (the sandbox without CLIENTS_FILE): the security scheme says no key is needed. */
  keyless: boolean
}

/** Shared schemas, OpenAPI generation (3.1) and Swagger UI at /docs; the document at /openapi.json. */
async function openapi (app: FastifyInstance, { version, keyless }: OpenapiOptions) {
  app.addSchema(ErrorEnvelopeSchema)
  for (const spec of ALL_RESOURCES) app.addSchema(resourceSchema(spec))
  for (const schema of COMPOSED_SCHEMAS) app.addSchema(schema)
  for (const schema of EVENT_SCHEMAS) app.addSchema(schema)
  app.addHook('onRoute', withExamples)

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Customs data gateway', version, description: DESCRIPTION, contact: { name: 'Customs gateway team' } },
      servers: [{ url: '/', description: 'This gateway' }],
      tags: TAGS,
      components: {
        examples: errorExampleComponents(),
        securitySchemes: {
          [SECURITY_SCHEME]: {
            type: 'http',
            scheme: 'bearer',
            description: keyless ? `${KEYLESS_NOTE}${KEY_DESCRIPTION}` : KEY_DESCRIPTION
          }
        }
      }
    },
    transformObject: (document) => 'openapiObject' in document ? optionalBodies(document.openapiObject) : document.swaggerObject,
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}`
    }
  })
  // Swagger UI adds its routes itself, without options of ours: they are declared public here as they are added.
  await app.register(async function docs (ui) {
    ui.addHook('onRoute', (route) => { route.config = { ...route.config, scope: null } })
    await ui.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { deepLinking: true, tryItOutEnabled: true, displayRequestDuration: true }
    })
  })
  app.get('/openapi.json', { config: { scope: null }, schema: { hide: true } }, async () => app.swagger())
}

export default fp(openapi, { name: 'openapi' })
