import { test } from 'tap'
import { buildApp } from '../../src/app.ts'
import { resolveConfig } from '../../src/config/resolve.ts'
import { sandboxEnv } from '../../src/sandbox/index.ts'
import {
  serializersCompiled,
  sharedSerializerFactory,
  withoutAnnotations
} from '../../src/schemas/serializers.ts'
import { Type } from '../../src/typebox.ts'

const route = (schema: unknown, httpStatus = '200') => ({
  schema,
  method: 'GET',
  url: '/x',
  httpStatus
})

test('withoutAnnotations drops what describes a schema, at every depth, and keeps names and ' +
  'data', async (t) => {
  const schema = {
    type: 'object',
    description: 'a record',
    title: 'Record',
    'x-examples': { one: { value: {} } },
    properties: {
      // A field named like an annotation is data: it stays, its own annotations go.
      description: { type: 'string', description: 'the text', examples: ['x'] },
      kind: { type: 'string', enum: ['a', 'b'], default: 'a', $comment: 'two kinds' },
      items: { type: 'array', items: { type: 'integer', example: 3 } }
    },
    required: ['description'],
    allOf: [{ $ref: 'Other', description: 'see there' }],
    additionalProperties: false
  }
  t.same(withoutAnnotations(schema), {
    type: 'object',
    properties: {
      description: { type: 'string' },
      kind: { type: 'string', enum: ['a', 'b'], default: 'a' },
      items: { type: 'array', items: { type: 'integer' } }
    },
    required: ['description'],
    allOf: [{ $ref: 'Other' }],
    additionalProperties: false
  })
  t.equal(schema.description, 'a record', 'the schema given is not changed')
})

test('a response schema is compiled once however many routes and statuses declare it; a ' +
  'different one gets its own', async (t) => {
  const compile = sharedSerializerFactory()({}, {})
  const envelope = (description: string) =>
    Type.Object({ code: Type.String({ description }), count: Type.Integer() }, { description })
  const first = compile(route(envelope('Invalid input'), '400'))
  const again = compile(route(envelope('No such route'), '404'))
  t.equal(again, first, 'the same shape under another description: the same serializer')
  const other = compile(route(Type.Object({ code: Type.String(), count: Type.Number() })))
  t.not(other, first, 'another type: another serializer')
  t.equal(
    first({ code: 'X', count: 3, extra: true }),
    '{"code":"X","count":3}',
    'serializes by the schema: unknown members left out'
  )
  t.equal(other({ code: 'X', count: 2.7 }), '{"code":"X","count":2.7}')
  // Each schema set (a Fastify encapsulation context with schemas of its own) compiles its own.
  const elsewhere = sharedSerializerFactory()({}, {})(route(envelope('Invalid input'), '400'))
  t.not(elsewhere, first)
})

test('the gateway compiles a few serializers for its routes, not one per route and ' +
  'status', async (t) => {
  const before = serializersCompiled()
  const app = await buildApp(
    { config: resolveConfig(sandboxEnv('http://127.0.0.1:1')), sandbox: true },
    false
  )
  t.teardown(() => app.close())
  const compiled = serializersCompiled() - before
  // What the routes declare: one response schema per route and status, as the OpenAPI document
  // lists them.
  const document = app.swagger() as {
    paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>
  }
  let declared = 0
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      declared += Object.keys(operation.responses ?? {}).length
    }
  }
  t.ok(declared > 200, `response schemas declared: ${declared}`)
  t.ok(compiled > 0 && compiled * 10 < declared, `serializers compiled: ${compiled}`)
  // Shared, they still answer by their own route's schema: an error envelope, and a lookup.
  const missing = await app.inject({ url: '/v1/customs/bc20/bills-of-lading' })
  t.equal(missing.statusCode, 400)
  t.match(missing.json(), {
    statusCode: 400,
    code: 'VALIDATION_FAILED',
    details: [{ field: 'query.npwp' }]
  })
})
