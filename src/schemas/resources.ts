import { Type, type TSchema } from './typebox.ts'
import { isArrayKind, isResource, type FieldSpec, type ResourceSpec, type ScalarKind } from '../mapping/resource.ts'

const SCALAR: Record<ScalarKind, { type?: string, format?: string }> = {
  string: { type: 'string' },
  text: { type: 'string' },
  integer: { type: 'integer' },
  number: { type: 'number' },
  flag: { type: 'boolean' },
  date: { type: 'string', format: 'date' },
  datetime: { type: 'string', format: 'date-time' },
  json: {}
}

function describe (field: FieldSpec): string {
  return `${field.description}. Upstream: \`${field.upstream}\`.`
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
  const base = SCALAR[kind]
  if (base.type === undefined) return Type.Unknown({ description })
  const type = field.nullable === true ? [base.type, 'null'] : base.type
  // OpenAPI 3.1 (JSON Schema 2020-12) writes nullable as a type array.
  return Type.Unsafe({ type, ...(base.format ? { format: base.format } : {}), ...(field.format ? { format: field.format } : {}), description })
}

/**
 * The response schema of a resource: every field the spec names, optional
 * but for the record's identity (the hub omits fields at times), and open for the unknown fields
 * the gateway keeps (contract.md 1).
 */
export function resourceSchema (spec: ResourceSpec): TSchema {
  const properties: Record<string, TSchema> = {}
  const required = new Set(spec.required ?? [])
  for (const field of spec.fields) {
    properties[field.name] = required.has(field.upstream) ? fieldSchema(field) : Type.Optional(fieldSchema(field))
  }
  return Type.Object(properties, {
    $id: spec.id,
    title: spec.title,
    description: `${spec.title} (${spec.source}). Fields the hub adds beyond these are passed on with camelCased names.`,
    additionalProperties: true
  })
}
