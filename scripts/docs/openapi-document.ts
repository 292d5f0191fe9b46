import Fastify, { type FastifyInstance, type InjectOptions, type RouteOptions } from 'fastify'
import gateway, { serverOptions } from '../../src/app.ts'
import { resolveConfig } from '../../src/config/resolve.ts'
import type { AnswerExamples } from '../../src/plugins/swagger.ts'
import { SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_PLATFORM_ID, sandboxEnv, startSandbox } from '../../src/sandbox/index.ts'
import { EXAMPLE_REQUEST_ID } from '../../src/schemas/error-examples.ts'
import { ERRORS_REFERENCE_PATH, renderErrorsReference } from './errors-reference.ts'
import { renderGlossary } from './glossary.ts'
import { renderHubOperations, type RouteOperations } from './hub-operations.ts'
import { METRICS_REFERENCE_PATH, metricRows, renderMetricsReference } from './metrics-reference.ts'
import { PROFILE_REFERENCE_PATH, renderProfileReference } from './profile-reference.ts'
import { PROFILE_SCHEMA_PATH, renderProfileSchema } from './profile-schema.ts'
import {
  renderRoutesReference, ROUTES_REFERENCE_PATH, type RouteDocument
} from './routes-reference.ts'
import { renderSandboxReference, SANDBOX_REFERENCE_PATH } from './sandbox-reference.ts'

/**
 * The committed artefacts (`openapi/openapi.json`, the answer examples,
 * `docs/reference/`) and how to produce them.
 * Shared by `scripts/generate-openapi.ts`, which writes them, and the test
 * that fails when the committed copies drift; the gateway itself never
 * imports it.
 */

/** Where the artefacts live, relative to the repository root. */
export const OPENAPI_PATH = 'openapi/openapi.json'
export const GLOSSARY_PATH = 'docs/reference/glossary.md'
export const HUB_OPERATIONS_PATH = 'docs/reference/hub-operations.md'
/** Read by plugins/swagger.ts at start-up (imported, so it is part of the build). */
export const ANSWER_EXAMPLES_PATH = 'src/schemas/answer-examples.json'

export interface GenerateOptions {
  /** Environment variables, as the gateway would read them (merged over the sandbox defaults). */
  env?: Record<string, string>
}

interface Gateway {
  app: FastifyInstance
  /** Every route registered, with its options (hubOperations among them). */
  routes: RouteOptions[]
}

/**
 * Runs `fn` on the gateway in front of a throwaway sandbox, then closes
 * both. Nothing it generates depends on the sandbox's address or on
 * credentials: the same code gives the same artefacts whatever port the
 * sandbox got.
 */
async function withGateway<T> (env: Record<string, string>, fn: (gateway: Gateway) => Promise<T>): Promise<T> {
  // The sandbox accepts whatever credentials the gateway is configured with.
  const sandbox = await startSandbox({
    apiKey: env.UPSTREAM_API_KEY ?? SANDBOX_API_KEY,
    accessToken: env.UPSTREAM_ACCESS_TOKEN ?? SANDBOX_ACCESS_TOKEN,
    platformId: env.PLATFORM_ID ?? SANDBOX_PLATFORM_ID
  })
  try {
    const config = resolveConfig({ ...sandboxEnv(sandbox.url), LOG_LEVEL: 'silent', ...env })
    // buildApp, with the routes collected as they are registered.
    const app = Fastify(serverOptions(config, false))
    const routes: RouteOptions[] = []
    app.addHook('onRoute', route => { routes.push(route) })
    // It does front a sandbox; the artefacts are the same with or without CLIENTS_FILE,
    // and the document is the production one (no "no key is needed" note).
    await app.register(gateway, { config, sandbox: true, productionDocument: true })
    await app.ready()
    try {
      return await fn({ app, routes })
    } finally {
      await app.close()
    }
  } finally {
    await sandbox.close()
  }
}

/** The OpenAPI document as plain JSON (what `GET /openapi.json` serves). */
export async function generateDocument (options: GenerateOptions = {}): Promise<Record<string, unknown>> {
  // Through JSON, as it is served and committed: schema objects carry non-JSON (symbol) keys.
  return await withGateway(options.env ?? {}, async ({ app }) => JSON.parse(JSON.stringify(app.swagger())) as Record<string, unknown>)
}

/** docs/reference/hub-operations.md: the hub operations behind each route, for operators. */
export async function generateHubOperations (): Promise<string> {
  return await withGateway({}, async ({ routes }) => {
    const seen = new Set<string>()
    const list: RouteOperations[] = []
    for (const route of routes) {
      const operations = route.config?.hubOperations
      const method = [route.method].flat().join(', ')
      if (operations === undefined || method === 'HEAD' || seen.has(`${method} ${route.url}`)) continue
      seen.add(`${method} ${route.url}`)
      list.push({ method, url: route.url.replace(/:([A-Za-z0-9]+)/g, '{$1}'), operations })
    }
    return renderHubOperations(list)
  })
}

/**
 * Where the metrics page's gateway finds its Redis: nowhere (nothing listens on port 1). The
 * gateway registers its Redis metrics all the same, after waiting for Redis a few seconds.
 */
const NO_REDIS = 'redis://127.0.0.1:1'

/**
 * The pages of docs/reference/ that a built gateway gives: the routes (from its OpenAPI
 * document and the routes it registered) and the metrics (from its registry, as built with
 * and without Redis), with the pages made from tables alone beside them: the error codes,
 * the hub profile's members and the sandbox's values. Keyed by path from the root.
 */
export async function generateReference (): Promise<Record<string, string>> {
  const [routes, plain] = await withGateway({}, async ({ app, routes }) => {
    const doc = JSON.parse(JSON.stringify(app.swagger())) as RouteDocument
    return [renderRoutesReference(doc, routes), metricRows(app.metrics.registry)] as const
  })
  const withRedis = await withGateway({ REDIS_URL: NO_REDIS }, async ({ app }) =>
    metricRows(app.metrics.registry))
  return {
    [ROUTES_REFERENCE_PATH]: routes,
    [ERRORS_REFERENCE_PATH]: renderErrorsReference(),
    [METRICS_REFERENCE_PATH]: renderMetricsReference(plain, withRedis),
    [PROFILE_REFERENCE_PATH]: renderProfileReference(),
    [SANDBOX_REFERENCE_PATH]: renderSandboxReference()
  }
}

interface DocOperation {
  operationId?: string
  parameters?: Array<{ name: string, in: string, example?: unknown, schema?: { examples?: unknown[] } }>
  requestBody?: { content?: Record<string, { schema?: { properties?: Record<string, { type?: string, examples?: unknown[] }> } }> }
  responses?: Record<string, { content?: Record<string, unknown> }>
}

/** A value of another JSON type than `type`: what the 400 example sends. */
function wrongType (type: string | undefined): unknown {
  return type === 'string' ? 15 : type === 'boolean' ? 'yes' : 'fifteen'
}

/** The request Swagger UI's "Try it out" sends: every parameter and body field at its documented example. */
function exampleRequest (method: string, path: string, op: DocOperation, broken: boolean): InjectOptions | undefined {
  let url = path
  const query = new URLSearchParams()
  let brokenOne = false
  const breakThis = () => broken && !brokenOne && (brokenOne = true)
  const properties = op.requestBody?.content?.['application/json']?.schema?.properties
  const fields = properties === undefined ? undefined : Object.entries(properties)
  const payload = fields === undefined ? undefined : Object.fromEntries(fields.map(([name, p]) => [name, breakThis() ? wrongType(p.type) : p.examples?.[0]]))
  for (const p of op.parameters ?? []) {
    const example = p.example ?? p.schema?.examples?.[0]
    if (p.in === 'header') continue
    const value = breakThis() ? 'A B' : String(example)
    if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(value))
    if (p.in === 'query') query.set(p.name, value)
  }
  if (broken && !brokenOne) return undefined
  return { method: method.toUpperCase() as InjectOptions['method'], url: query.size > 0 ? `${url}?${query}` : url, ...(payload === undefined ? {} : { payload }) }
}

/**
 * What the gateway answers each operation on the sandbox, with the
 * documented examples (200) and with its first field broken (400): the
 * examples of the document, real answers from the seeded data. Lookups are
 * asked uncached, so that `meta` is what a first call gets.
 */
export async function generateAnswerExamples (): Promise<AnswerExamples> {
  // Load shedding off too: a busy machine must not turn an example into a 503.
  return await withGateway({ CACHE_TTL_SECONDS: '0', PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0' }, async ({ app }) => {
    const doc = app.swagger() as { paths: Record<string, Record<string, DocOperation>> }
    const out: AnswerExamples = {}
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const id = op.operationId
        // The WebSocket and the metrics text have no JSON answer to show.
        if (id === undefined || op.responses?.[200]?.content?.['application/json'] === undefined) continue
        // A new random ticket each time: its schema carries a fixed example instead.
        if (id === 'postEventStreamTicket') continue
        const entry: AnswerExamples[string] = {}
        const ok = await app.inject(exampleRequest(method, path, op, false)!)
        if (ok.statusCode !== 200) throw new Error(`${method.toUpperCase()} ${path}: the documented examples answer ${ok.statusCode}: ${ok.body.slice(0, 300)}`)
        entry[200] = ok.json()
        const bad = exampleRequest(method, path, op, true)
        if (bad !== undefined) {
          const res = await app.inject(bad)
          if (res.statusCode !== 400) throw new Error(`${method.toUpperCase()} ${path}: a broken request answers ${res.statusCode}`)
          entry[400] = { ...res.json<Record<string, unknown>>(), requestId: EXAMPLE_REQUEST_ID }
        }
        out[id] = entry
      }
    }
    return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)))
  })
}

/** The committed text of a document: 2-space JSON in the generator's (deterministic) key order, with a trailing newline. */
export function renderDocument (doc: unknown): string {
  return JSON.stringify(doc, null, 2) + '\n'
}

/**
 * The artefacts that follow from the code and the committed answer examples,
 * keyed by their path from the repository root. (The examples themselves are
 * generateAnswerExamples'; the document reads them as the app is built, so
 * `npm run openapi` writes them first and the rest in a fresh process.)
 */
export async function generateArtefacts (options: GenerateOptions = {}): Promise<Record<string, string>> {
  return {
    [OPENAPI_PATH]: renderDocument(await generateDocument(options)),
    [GLOSSARY_PATH]: renderGlossary(),
    [HUB_OPERATIONS_PATH]: await generateHubOperations(),
    [PROFILE_SCHEMA_PATH]: renderProfileSchema(),
    ...await generateReference()
  }
}
