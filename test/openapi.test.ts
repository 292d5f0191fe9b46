import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import SwaggerParser from '@apidevtools/swagger-parser'
import { Document, Ruleset, Spectral } from '@stoplight/spectral-core'
import spectralParsers from '@stoplight/spectral-parsers'
import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import t from 'tap'
import ruleset from '../.spectral.mjs'
import { SECURITY_SCHEME } from '../src/catalogue/scopes.ts'
import { ConfigSchema } from '../src/config/schema.ts'
import { errors } from '../src/errors.ts'
import { toUpstreamBooked, toUpstreamFinalization, toUpstreamOffer } from '../src/mapping/request-bodies.ts'
import { glossaryRows, renderGlossary, REQUEST_BODIES, responseKeyRows } from '../scripts/docs/glossary.ts'
import { ANSWER_EXAMPLES_PATH, generateAnswerExamples, generateDocument, generateHubOperations, GLOSSARY_PATH, HUB_OPERATIONS_PATH, OPENAPI_PATH, renderDocument } from '../scripts/docs/openapi-document.ts'
import { OPERATIONS } from '../src/catalogue/operations.ts'
import { isArrayKind, isResource } from '../src/catalogue/resource-spec.ts'
import { ALL_RESOURCES } from '../src/catalogue/resources.ts'
import type { HubOperation } from '../src/catalogue/types.ts'
import { KEYLESS_NOTE } from '../src/plugins/swagger.ts'
import { requestFormats } from '../src/schemas/formats.ts'
import { build, SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY } from './helper.ts'

// The parsers package re-exports through tslib, which Node's CommonJS
// detection cannot see: its named exports live on the default export.
const { Json } = spectralParsers

type JsonObject = Record<string, unknown>
type ApiDocument = Extract<Parameters<typeof SwaggerParser.validate>[0], object>

const ROOT = new URL('../', import.meta.url)
const REGENERATE = 'run `npm run openapi` and commit the result'

/** docs/api.md#routes, written out: every route the gateway promises. */
const CONTRACT_ROUTES = [
  'GET /v1/customs/bc16/bills-of-lading',
  'GET /v1/customs/bc20/bills-of-lading',
  'GET /v1/customs/bc23/bills-of-lading',
  'GET /v1/taxpayers/{npwp}/bills-of-lading',
  'GET /v1/customs/bc20/declarations/{pibNo}',
  'GET /v1/customs/bc20/declarations',
  'GET /v1/customs/bc20/containers',
  'GET /v1/customs/bc23/containers',
  'GET /v1/customs/bc25/containers',
  'GET /v1/customs/bc261/containers',
  'GET /v1/customs/bc262/containers',
  'GET /v1/customs/bc27/containers',
  'GET /v1/customs/bc28/containers',
  'GET /v1/customs/bc30/containers',
  'GET /v1/customs/sp3b/containers',
  'GET /v1/customs/ppftz/containers',
  'GET /v1/sp2/documents',
  'GET /v1/sp2/containers',
  'POST /v1/sp2/documents/{sp2Id}/finalization',
  'POST /v1/bookings/{bookingRequestId}/offers',
  'POST /v1/bookings/{bookingRequestId}/booked',
  'GET /v1/events',
  'GET /v1/events/stream',
  'POST /v1/events/tickets',
  'GET /health/live',
  'GET /health/ready',
  'GET /metrics'
]

/** Statuses every route that calls the hub can answer (docs/api.md#the-envelope-and-errors). */
const HUB_ROUTE_STATUSES = ['200', '400', '404', '500', '502', '503', '504']

/** The event routes: no hub call behind them (docs/api.md#events). */
const EVENT_ROUTES = new Set(['GET /v1/events', 'GET /v1/events/stream', 'POST /v1/events/tickets'])

/**
 * Statuses every /v1 route can answer to its caller: no or an unknown key, a missing scope,
 * over the limit (docs/api.md#scopes-and-limits).
 */
const CALLER_STATUSES = ['401', '403', '429']

/**
 * Non-2xx answers that knowingly do not use the error envelope: readiness
 * answers its own body while shutting down (routes/health.ts).
 */
const NON_ENVELOPE_ERRORS = new Set<string>()

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

function isJson (value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function objectAt (value: JsonObject, key: string): JsonObject {
  const child = value[key]
  return isJson(child) ? child : {}
}

interface OperationEntry { route: string, path: string, method: string, op: JsonObject }

function operationsOf (doc: JsonObject): OperationEntry[] {
  const out: OperationEntry[] = []
  for (const [path, item] of Object.entries(objectAt(doc, 'paths'))) {
    if (!isJson(item)) continue
    for (const [method, op] of Object.entries(item)) {
      if (HTTP_METHODS.has(method) && isJson(op)) out.push({ route: `${method.toUpperCase()} ${path}`, path, method, op })
    }
  }
  return out
}

/** The line where two texts first differ, for a readable drift message. */
function firstDifference (committed: string, generated: string): string {
  const a = committed.split('\n')
  const b = generated.split('\n')
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `line ${i + 1}: committed ${JSON.stringify(a[i] ?? '<end of file>')}, generated ${JSON.stringify(b[i] ?? '<end of file>')}`
  }
  return 'no difference'
}

async function readCommitted (path: string): Promise<string | undefined> {
  try {
    return await readFile(new URL(path, ROOT), 'utf8')
  } catch {
    return undefined
  }
}

/** Every property of a schema, nested ones included, that has no description. */
function undocumentedProperties (schema: unknown, at: string, out: string[]): string[] {
  if (Array.isArray(schema)) {
    schema.forEach((s, i) => undocumentedProperties(s, `${at}[${i}]`, out))
    return out
  }
  if (!isJson(schema)) return out
  for (const [name, property] of Object.entries(objectAt(schema, 'properties'))) {
    if (!isJson(property) || typeof property.description !== 'string' || property.description.trim() === '') out.push(`${at}.${name}`)
    undocumentedProperties(property, `${at}.${name}`, out)
  }
  for (const key of ['items', 'additionalProperties', 'allOf', 'anyOf', 'oneOf', 'not', 'prefixItems']) {
    if (key in schema) undocumentedProperties(schema[key], `${at}/${key}`, out)
  }
  return out
}

const doc = await generateDocument()
const docText = renderDocument(doc)

t.test('drift: the committed openapi/openapi.json is what the code generates', async (t) => {
  const committed = await readCommitted(OPENAPI_PATH)
  t.ok(committed !== undefined, `${OPENAPI_PATH} is missing: ${REGENERATE}`)
  if (committed === undefined) return
  t.ok(committed === docText, `${OPENAPI_PATH} is out of date: ${REGENERATE} (${firstDifference(committed, docText)})`)
})

t.test('drift: the committed glossary is what the code generates', async (t) => {
  const glossary = renderGlossary()
  const committed = await readCommitted(GLOSSARY_PATH)
  t.ok(committed !== undefined, `${GLOSSARY_PATH} is missing: ${REGENERATE}`)
  if (committed === undefined) return
  t.ok(committed === glossary, `${GLOSSARY_PATH} is out of date: ${REGENERATE} (${firstDifference(committed, glossary)})`)
})

t.test('drift: the committed answer examples are what the gateway answers on the sandbox now', async (t) => {
  const committed = await readCommitted(ANSWER_EXAMPLES_PATH)
  const generated = renderDocument(await generateAnswerExamples())
  t.ok(committed === generated, `${ANSWER_EXAMPLES_PATH} is out of date: ${REGENERATE} (${firstDifference(committed ?? '', generated)})`)
})

t.test('drift: the committed hub-operations page is what the code generates', async (t) => {
  const committed = await readCommitted(HUB_OPERATIONS_PATH)
  const generated = await generateHubOperations()
  t.ok(committed === generated, `${HUB_OPERATIONS_PATH} is out of date: ${REGENERATE} (${firstDifference(committed ?? '', generated)})`)
  for (const route of CONTRACT_ROUTES.filter(r => r.startsWith('GET /v1/') || r.startsWith('POST /v1/'))) {
    if (EVENT_ROUTES.has(route)) continue
    t.ok(generated.includes(`| \`${route}\` |`), `${route} is in the operators' page`)
  }
})

t.test('the document is the same whatever port the sandbox got, and is stable text', async (t) => {
  const again = await generateDocument()
  t.equal(renderDocument(again), docText, 'a second generation (another sandbox port) gives the same text')
  t.notMatch(docText, /127\.0\.0\.1|localhost/, 'no sandbox address in the document')
  t.ok(docText.endsWith('}\n') && !docText.endsWith('\n\n'), 'one trailing newline')
  t.match(docText, /^\{\n {2}"openapi"/, '2-space indent')
})

t.test('swagger-parser validates the document as OpenAPI 3.1', async (t) => {
  t.equal(doc.openapi, '3.1.0')
  try {
    // validate() dereferences in place: give it a copy.
    const api = await SwaggerParser.validate(structuredClone(doc) as ApiDocument)
    t.ok(api, 'valid')
  } catch (error) {
    t.fail(`swagger-parser: ${error instanceof Error ? error.message : String(error)}`)
  }
})

t.test('Spectral (spectral:oas, the committed .spectral.mjs) finds no error and no warning', async (t) => {
  const spectral = new Spectral()
  const file = fileURLToPath(new URL(OPENAPI_PATH, ROOT))
  // The ruleset's literal type is narrower than RulesetDefinition; Ruleset validates it at run time.
  spectral.setRuleset(new Ruleset(ruleset, { source: fileURLToPath(new URL('.spectral.mjs', ROOT)) }))
  const results = await spectral.run(new Document(docText, Json, file))
  const errors = results.filter(r => r.severity === 0)
  const warnings = results.filter(r => r.severity === 1)
  t.comment(`Spectral: ${errors.length} error(s), ${warnings.length} warning(s), ${results.length - errors.length - warnings.length} info/hint`)
  t.same(errors.map(e => `${String(e.code)} at ${e.path.join('.')}: ${e.message}`), [], 'no Spectral errors')
  t.same(warnings.map(e => `${String(e.code)} at ${e.path.join('.')}: ${e.message}`), [], 'no Spectral warnings')
})

/** The document without its examples: what it says, not what the hub's data holds. */
function withoutExamples (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutExamples)
  if (!isJson(value)) return value
  return Object.fromEntries(Object.entries(value).filter(([key]) => key !== 'example' && key !== 'examples').map(([key, v]) => [key, withoutExamples(v)]))
}

t.test('the public document speaks to web developers: no settings, hub addresses or docs/hub.md sections', async (t) => {
  const text = JSON.stringify(withoutExamples(doc))
  for (const name of Object.keys(ConfigSchema.properties)) t.notMatch(text, new RegExp(`\\b${name}\\b`), `no ${name}`)
  for (const pattern of [/interface\.md/, /\{(hub|base)_url\}/, /\/V[13]\/HUB/, /HUB-DEV/, /\b4\.\d+(\.\d+)?\b/]) t.notMatch(text, pattern, `no ${String(pattern)}`)
  t.match(text, /Hub field: `bl_no`/, 'the hub\'s field names stay, in the field descriptions')
  const field = objectAt(objectAt(objectAt(objectAt(objectAt(objectAt(doc, 'components'), 'schemas'), 'ErrorEnvelope'), 'properties'), 'details'), 'items')
  const description = String(objectAt(objectAt(field, 'properties'), 'field').description)
  t.match(description, /`query\.npwp`/, 'details.field is described as it is')
  t.notMatch(description, /querystring/)
})

/**
 * Every example of the document, validated against the schema it illustrates
 * (ajv, strict; the document's components resolvable; the request formats
 * and the decimal multipleOf the gateway validates with).
 */
t.test('every example in the document is valid against its own schema', async (t) => {
  const Ajv = Ajv2020.default
  const ajv = new Ajv({ strict: true, allowUnionTypes: true, allErrors: true })
  addFormats.default(ajv)
  requestFormats(ajv)
  // Each component under an id of its own (strict mode knows no `components` keyword), references rewritten to them.
  const BASE = 'https://gateway.example/schemas/'
  const rooted = (schema: unknown) => JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${BASE}`)) as object
  for (const [name, schema] of Object.entries(objectAt(objectAt(doc, 'components'), 'schemas'))) ajv.addSchema(rooted(schema), `${BASE}${name}`)
  const componentExamples = objectAt(objectAt(doc, 'components'), 'examples')
  const resolveExample = (example: JsonObject): unknown => {
    const ref = example.$ref
    if (typeof ref === 'string') return objectAt(componentExamples, ref.replace('#/components/examples/', '')).value
    return example.value
  }
  let checked = 0
  const check = (schema: unknown, example: unknown, where: string) => {
    const valid = ajv.validate(rooted(schema), example)
    t.ok(valid, `${where}: ${JSON.stringify(ajv.errors?.slice(0, 3))}`)
    checked++
  }
  for (const { route, op } of operationsOf(doc)) {
    for (const [status, response] of Object.entries(objectAt(op, 'responses'))) {
      for (const media of Object.values(objectAt(response as JsonObject, 'content'))) {
        if (!isJson(media)) continue
        if ('example' in media) check(media.schema, media.example, `${route} ${status} example`)
        for (const [name, example] of Object.entries(objectAt(media, 'examples'))) {
          const value = resolveExample(example as JsonObject)
          check(media.schema, value, `${route} ${status} example ${name}`)
          if (/^[45]/.test(status)) {
            t.equal((value as JsonObject).statusCode, Number(status), `${route} ${status} ${name}: its own status`)
            t.equal((value as JsonObject).code, name, `${route} ${status} ${name}: its own code`)
          }
        }
      }
    }
    for (const parameter of (op.parameters ?? []) as JsonObject[]) {
      if ('example' in parameter) check(parameter.schema, parameter.example, `${route} parameter ${String(parameter.name)}`)
    }
    for (const media of Object.values(objectAt(objectAt(op, 'requestBody'), 'content'))) {
      for (const [name, property] of Object.entries(objectAt(objectAt(media as JsonObject, 'schema'), 'properties'))) {
        for (const example of ((property as JsonObject).examples ?? []) as unknown[]) check(property, example, `${route} body ${name}`)
      }
    }
  }
  for (const [name, schema] of Object.entries(objectAt(objectAt(doc, 'components'), 'schemas'))) {
    for (const example of ((schema as JsonObject).examples ?? []) as unknown[]) check({ $ref: `#/components/schemas/${name}` }, example, `component ${name}`)
  }
  t.ok(checked > 250, `${checked} examples checked`)
})

t.test('the finalization\'s body may be left out; the other writes need theirs', async (t) => {
  const body = (path: string) => objectAt(objectAt(objectAt(objectAt(doc, 'paths'), path), 'post'), 'requestBody')
  t.equal(body('/v1/sp2/documents/{sp2Id}/finalization').required, false)
  t.equal(body('/v1/bookings/{bookingRequestId}/offers').required, true)
  t.equal(body('/v1/bookings/{bookingRequestId}/booked').required, true)
  t.notMatch(docText, /x-optional-body/, 'the marker does not reach the document')
})

t.test('every operation shows a real answer, and every error status examples of its own codes', async (t) => {
  for (const { route, op } of operationsOf(doc)) {
    const responses = objectAt(op, 'responses')
    const ok = objectAt(objectAt(objectAt(responses, '200'), 'content'), route === 'GET /metrics' ? 'text/plain' : route === 'GET /v1/events/stream' ? 'text/event-stream' : 'application/json')
    if (route !== 'GET /v1/events') {
      t.ok(ok.example !== undefined || objectAt(ok, 'schema').examples !== undefined, `${route}: a 200 example`)
      t.notMatch(JSON.stringify(ok.example ?? null), /"string"|additionalProp/, `${route}: not a placeholder`)
    }
    for (const status of Object.keys(responses).filter(s => /^[45]/.test(s))) {
      const examples = objectAt(objectAt(objectAt(objectAt(responses, status), 'content'), 'application/json'), 'examples')
      t.ok(Object.keys(examples).length > 0, `${route} ${status}: examples`)
      for (const code of Object.keys(examples)) t.ok(code in errors, `${route} ${status}: ${code} is a code`)
    }
  }
  const lists = operationsOf(doc).filter(({ route }) => route.startsWith('GET /v1/') && !EVENT_ROUTES.has(route))
  for (const { route, op } of lists) {
    const example = objectAt(objectAt(objectAt(objectAt(op, 'responses'), '200'), 'content'), 'application/json').example
    const data = isJson(example) ? example.data : undefined
    t.ok(Array.isArray(data) ? data.length > 0 : isJson(data), `${route}: the example holds data`)
  }
})

t.test('every operation is described: tags, summary, description, operationId, a response for each status', async (t) => {
  const operations = operationsOf(doc)
  const ids = new Set<string>()
  for (const { route, path, op } of operations) {
    t.ok(Array.isArray(op.tags) && op.tags.length > 0, `${route}: tags`)
    for (const key of ['summary', 'description', 'operationId']) {
      t.ok(typeof op[key] === 'string' && op[key].trim() !== '', `${route}: ${key}`)
    }
    const id = String(op.operationId)
    t.notOk(ids.has(id), `${route}: operationId ${id} is unique`)
    ids.add(id)

    const responses = objectAt(op, 'responses')
    const statuses = Object.keys(responses)
    t.ok(statuses.some(s => /^[123]\d\d$/.test(s) && s !== '100'), `${route}: a success status (${statuses.join(', ')})`)
    for (const status of statuses) {
      const response = objectAt(responses, status)
      t.ok(typeof response.description === 'string' && response.description !== '', `${route} ${status}: description`)
      // No body: switching protocols, no content, not modified (the conditional lookups).
      if (status === '101' || status === '204' || status === '304') continue
      const content = objectAt(response, 'content')
      const media = Object.values(content)
      t.ok(media.length > 0 && media.every(m => isJson(m) && isJson(m.schema)), `${route} ${status}: a response schema`)
      if (/^[45]/.test(status) && !NON_ENVELOPE_ERRORS.has(`${route} ${status}`)) {
        t.match(JSON.stringify(content), /#\/components\/schemas\/ErrorEnvelope/, `${route} ${status}: the error envelope`)
      }
    }
    if (path.startsWith('/v1/') && !EVENT_ROUTES.has(route)) {
      for (const status of HUB_ROUTE_STATUSES) t.ok(status in responses, `${route}: declares ${status}`)
    }
    if (path.startsWith('/v1/')) {
      for (const status of CALLER_STATUSES) t.ok(status in responses, `${route}: declares ${status}`)
      t.match(op.security, [{ bearerAuth: [/^[a-z0-9]+:[a-z]+$/] }], `${route}: a bearer scope`)
    } else {
      t.equal(op.security, undefined, `${route}: public`)
    }
  }

  const routes = new Set(operations.map(o => o.route))
  for (const route of CONTRACT_ROUTES) t.ok(routes.has(route), `docs/api.md#routes: ${route} is documented`)
})

t.test('no upstream secret is in the document', async (t) => {
  for (const [name, secret] of [['SANDBOX_API_KEY', SANDBOX_API_KEY], ['SANDBOX_ACCESS_TOKEN', SANDBOX_ACCESS_TOKEN]]) {
    t.notOk(docText.includes(secret as string), `${name} is not in the document`)
  }

  const apiKey = 'custom-api-key-7c41e0b9f2'
  const accessToken = 'Bearer custom-access-token-93ad51'
  const custom = renderDocument(await generateDocument({ env: { UPSTREAM_API_KEY: apiKey, UPSTREAM_ACCESS_TOKEN: accessToken } }))
  t.notOk(custom.includes(apiKey), 'a configured UPSTREAM_API_KEY is not in the document')
  t.notOk(custom.includes(accessToken) || custom.includes('custom-access-token-93ad51'), 'a configured UPSTREAM_ACCESS_TOKEN is not in the document')
  t.equal(custom, docText, 'credentials do not change the document')
})

t.test('every schema property in components has a description', async (t) => {
  const missing: string[] = []
  for (const [name, schema] of Object.entries(objectAt(objectAt(doc, 'components'), 'schemas'))) {
    undocumentedProperties(schema, name, missing)
  }
  t.same(missing, [], `properties without a description: ${missing.join(', ') || 'none'}`)
})

t.test('GET /openapi.json serves the same document and GET /docs/ answers Swagger UI', async (t) => {
  const { app } = await build(t, { clients: [{ name: 'docs-reader', key: 'cgw_DOCStestKEYdocsTESTkeyDOCStestKEYdocs1234', scopes: ['customs:read'] }] })
  const served = await app.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(served.statusCode, 200)
  t.match(served.headers['content-type'], /^application\/json/)
  t.same(served.json(), doc, 'the served document is the generated one')

  const ui = await app.inject({ method: 'GET', url: '/docs/' })
  t.equal(ui.statusCode, 200)
  t.match(ui.headers['content-type'], /^text\/html/)
  t.match(ui.body, /swagger/i)
})

t.test('on the sandbox without keys, the document served says that no key is needed (Swagger UI\'s Authorize dialog shows it)', async (t) => {
  const { app } = await build(t)
  const served = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as JsonObject
  const scheme = (d: JsonObject) => objectAt(objectAt(objectAt(d, 'components'), 'securitySchemes'), SECURITY_SCHEME)
  t.equal(scheme(served).description, `${KEYLESS_NOTE}${String(scheme(doc).description)}`, 'the note, then what the key is where authentication is on')
  t.match(scheme(served).description, /^No key is needed here: .*client authentication off \(no CLIENTS_FILE\)/)
  t.notMatch(String(scheme(doc).description), /No key is needed/, 'the committed (production) document has no such note')
  const rest = structuredClone(served)
  scheme(rest).description = scheme(doc).description
  t.same(rest, doc, 'and nothing else differs')
  const keyless = await app.inject({ url: '/v1/customs/bc20/bills-of-lading?npwp=012345678901000' })
  t.equal(keyless.statusCode, 200, 'which holds: no key, an answer')
})

t.test('the glossary maps every upstream name', async (t) => {
  const rows = glossaryRows()
  const text = renderGlossary()
  const schemas = objectAt(objectAt(doc, 'components'), 'schemas')

  t.test('every field of every resource, with the name the OpenAPI document uses', async (t) => {
    for (const spec of ALL_RESOURCES) {
      const properties = objectAt(objectAt(schemas, spec.id), 'properties')
      for (const field of spec.fields) {
        const row = rows.find(r => r.where === spec.id && r.upstream === field.upstream)
        t.ok(row, `${spec.id}.${field.upstream} has a row`)
        t.equal(row?.gateway, field.name, `${spec.id}.${field.upstream} → ${field.name}`)
        t.ok(row !== undefined && row.conversion !== '' && row.description !== '', `${spec.id}.${field.upstream}: conversion and description`)
        t.ok(field.name in properties, `${spec.id}.${field.name} is a property of the ${spec.id} schema`)
        t.ok(text.includes(`| \`${field.upstream}\` | \`${field.name}\` |`),
          `${spec.id}.${field.upstream} is in the glossary`)
      }
      t.ok(text.includes(`### ${spec.id}\n`), `${spec.id} has a section`)
    }
  })

  t.test('nested resources link to their own table', async (t) => {
    for (const spec of ALL_RESOURCES) {
      for (const field of spec.fields) {
        const nested = isResource(field.kind) ? field.kind : isArrayKind(field.kind) && field.kind.arrayOf !== 'json' ? field.kind.arrayOf : undefined
        if (nested === undefined) continue
        t.ok(ALL_RESOURCES.includes(nested), `${spec.id}.${field.upstream}: ${nested.id} is in ALL_RESOURCES`)
      }
    }
  })

  t.test('every parameter of every operation', async (t) => {
    for (const op of OPERATIONS as readonly HubOperation[]) {
      for (const param of op.params) {
        const row = rows.find(r => r.upstream === param.upstream && r.gateway === param.name && r.where.includes(`\`${op.id}\``))
        t.ok(row, `${op.id}: ${param.upstream} → ${param.name}`)
      }
    }
  })

  t.test('the request bodies are exactly what mapping/requests.ts sends', async (t) => {
    const sent: Record<string, object> = {
      DetilBooking: toUpstreamOffer('BRQ-1', { serviceOrderId: 'SO-1', price: 1, offeredAt: '2024-03-01T08:15:00+07:00' }, 'PLT', '+07:00'),
      'DetilBooking/isBooked': toUpstreamBooked(true, 'note'),
      'document_sp2/final': toUpstreamFinalization('3f1c2b7a-5d4e-4c1b-9a8f-1e2d3c4b5a60')
    }
    t.same(REQUEST_BODIES.map(b => b.operation).sort(), Object.keys(sent).sort(), 'one table per request body')
    for (const body of REQUEST_BODIES) {
      t.same(body.fields.map(f => f.upstream).sort(), Object.keys(sent[body.operation] ?? {}).sort(), `${body.operation}: the same keys`)
      for (const field of body.fields) {
        t.ok(rows.some(r => r.upstream === field.upstream && r.where.includes(`\`${body.operation}\``)), `${body.operation}.${field.upstream} has a row`)
      }
    }
  })

  t.test('the response key of every keyed list', async (t) => {
    const keyed = (OPERATIONS as readonly HubOperation[]).filter(op => op.response.type === 'keyed-list')
    t.equal(responseKeyRows().length, keyed.length)
    for (const op of keyed) {
      if (op.response.type !== 'keyed-list') continue
      t.ok(text.includes(`| \`${op.id}\` | \`${op.response.key}\` | \`data\` |`), `${op.id} answers under ${op.response.key}`)
    }
  })

  t.test('the conversions are stated', async (t) => {
    t.match(text, /0\/1 flags become booleans/)
    t.match(text, /default `\+07:00`/)
    t.match(text, /`YYYYMMDD`/)
    t.match(text, /`gate_pass`/)
    t.match(text, /camelCased/)
  })
})
