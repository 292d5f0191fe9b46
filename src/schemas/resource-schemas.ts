import { Type, type TSchema } from './typebox.ts'
import { isArrayKind, isResource, namesOf, type FieldSpec, type ResourceSpec, type ScalarKind } from '../catalogue/resource-spec.ts'

// The JSON Schema of each resource of catalogue/resources.ts, as the OpenAPI
// document's components show it (registered by plugins/swagger.ts).

const SCALAR: Record<ScalarKind, { type?: string, format?: string }> = {
  string: { type: 'string' },
  text: { type: 'string' },
  integer: { type: 'integer' },
  number: { type: 'number' },
  flag: { type: 'boolean' },
  date: { type: 'string', format: 'date' },
  datetime: { type: 'string', format: 'date-time' },
  'date-with-time': { type: 'string', format: 'date' },
  json: {}
}

function describe (field: FieldSpec): string {
  return `${field.description}. Hub field: \`${field.upstream}\`.`
}

/** A scalar's schema; OpenAPI 3.1 (JSON Schema 2020-12) writes nullable as a type array. */
function scalarSchema (field: FieldSpec, base: { type?: string, format?: string }, description: string): TSchema {
  if (base.type === undefined) return Type.Unknown({ description })
  const type = field.nullable === true ? [base.type, 'null'] : base.type
  return Type.Unsafe({ type, ...(base.format ? { format: base.format } : {}), ...(field.format ? { format: field.format } : {}), description })
}

function fieldSchema (field: FieldSpec): TSchema {
  const description = describe(field)
  const { kind } = field
  if (isResource(kind)) {
    // @fastify/swagger drops siblings of a bare $ref; an allOf of one keeps the description.
    return field.nullable === true
      ? Type.Union([Type.Ref(kind.id), Type.Null()], { description })
      : Type.Intersect([Type.Ref(kind.id)], { description })
  }
  if (isArrayKind(kind)) {
    return Type.Array(kind.arrayOf === 'json' ? Type.Unknown() : Type.Ref(kind.arrayOf.id), { description })
  }
  if (kind === 'date-with-time') {
    return scalarSchema(field, SCALAR.date, `${field.description}: the day in the hub's calendar, \`YYYY-MM-DD\`. Hub field: \`${field.upstream}\` (its date).`)
  }
  return scalarSchema(field, SCALAR[kind], description)
}

/** The date-time of a `date-with-time` field, under its second name. */
function dateTimeSchema (field: FieldSpec): TSchema {
  return scalarSchema(field, SCALAR.datetime, `${field.description}, with the time of day the hub sends: ISO 8601 with the hub's offset. Hub field: \`${field.upstream}\`.`)
}

/**
 * The response schema of a resource: every field the spec names, optional
 * but for the record's identity (the hub omits fields at times), and open for the unknown fields
 * the gateway keeps (docs/api.md#the-dialect).
 */
export function resourceSchema (spec: ResourceSpec): TSchema {
  const properties: Record<string, TSchema> = {}
  const required = new Set([...(spec.required ?? []), ...spec.fields.filter(f => f.fromRequest === true).map(f => f.upstream)])
  for (const field of spec.fields) {
    const schemas = [fieldSchema(field), ...(namesOf(field).length === 2 ? [dateTimeSchema(field)] : [])]
    namesOf(field).forEach((name, i) => {
      properties[name] = required.has(field.upstream) ? schemas[i]! : Type.Optional(schemas[i]!)
    })
  }
  return Type.Object(properties, {
    $id: spec.id,
    title: spec.title,
    description: `${spec.title}. Fields the hub adds beyond these are passed on with camelCased names.`,
    additionalProperties: true
  })
}
