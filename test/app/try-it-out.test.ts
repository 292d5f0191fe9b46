import { test } from 'tap'
import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { build } from '../helpers/helper.ts'

interface Parameter {
  name: string
  in: string
  example?: unknown
  schema?: { examples?: unknown[] }
}
interface Operation {
  parameters?: Parameter[]
  requestBody?: {
    content: Record<string, { schema: { properties?: Record<string, { examples?: unknown[] }> } }>
  }
}

/**
 * What Swagger UI's "Try it out" sends: every parameter and body field filled
 * with its documented example. Each route must answer 200 on the sandbox.
 */
test('every route answers 200 when tried with its documented examples', async (t) => {
  const { app } = await build(t)
  const doc = app.swagger() as unknown as {
    paths: Record<
      string,
      Record<
        string,
        Operation & { responses: Record<string, { content?: Record<string, { schema: object }> }> }
      >
    >
    components: { schemas: Record<string, object> }
  }
  // Every body is checked against the schema the document gives for its status:
  // lookups assemble their JSON themselves, so nothing else would notice a drift.
  const Ajv = Ajv2020.default
  const ajv = new Ajv({ strict: false, allErrors: true })
  addFormats.default(ajv)
  ajv.addSchema({ $id: 'doc', components: doc.components })
  const fix = (schema: object) =>
    JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')) as object
  let tried = 0
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (path === '/v1/events') continue // a WebSocket; see events.test.ts
      // an event stream that never ends; see events-stream.test.ts
      if (path === '/v1/events/stream') continue
      let url = path
      const query = new URLSearchParams()
      for (const p of op.parameters ?? []) {
        const example = p.example ?? p.schema?.examples?.[0]
        if (p.name === 'idempotency-key') {
          // Prefilled, one key would be every user's: their second, different offer a 422 for a
          // day.
          t.equal(example, undefined, `${method} ${path}: no Idempotency-Key is prefilled`)
          continue
        }
        if (p.name === 'if-none-match') {
          // A tag is one answer's: a prefilled one would be no one's, or turn "Try it out" into a
          // bodiless 304.
          t.equal(example, undefined, `${method} ${path}: no If-None-Match is prefilled`)
          continue
        }
        t.ok(example !== undefined, `${method} ${path}: ${p.name} has an example`)
        if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(example)))
        if (p.in === 'query') query.set(p.name, String(example))
      }
      const properties = op.requestBody?.content['application/json']?.schema.properties
      const payload =
        properties === undefined
          ? undefined
          : Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, v.examples?.[0]]))
      const res = await app.inject({
        method: method.toUpperCase() as 'GET' | 'POST',
        url: query.size > 0 ? `${url}?${query}` : url,
        ...(payload === undefined ? {} : { payload })
      })
      t.equal(res.statusCode, 200, `${method.toUpperCase()} ${path}: ${res.body.slice(0, 160)}`)
      if (method === 'get' && path.startsWith('/v1/')) {
        const data = (res.json() as { data: unknown }).data
        t.ok(
          Array.isArray(data) ? data.length > 0 : data !== null && typeof data === 'object',
          `${method.toUpperCase()} ${path}: its examples find data on the sandbox`
        )
      }
      const schema = op.responses['200']?.content?.['application/json']?.schema
      if (schema !== undefined) {
        const valid = ajv.validate(fix(schema), res.json())
        t.ok(
          valid,
          `${method.toUpperCase()} ${path}: the body matches its documented schema ` +
            `${JSON.stringify(ajv.errors?.slice(0, 2))}`
        )
      }
      tried++
    }
  }
  t.ok(tried >= 24, `tried ${tried} operations`)
  // Every sandbox answer is the documented shape, so the byte transcoder read
  // each one: none fell back to the parse-and-normalize path.
  const slowPath = await app.metrics.registry
    .getSingleMetric('gateway_upstream_slow_path_total')
    ?.get()
  t.same(slowPath?.values ?? [], [], 'no answer took the slow path')
})
