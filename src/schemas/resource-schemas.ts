import { Type, type TObject, type TSchema } from '../typebox.ts'
import {
  HUB_EXTRA,
  isArrayKind,
  isResource,
  namesOf,
  type FieldSpec,
  type ResourceSpec,
  type ScalarKind
} from '../catalogue/resource-spec.ts'

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
function scalarSchema (
  field: FieldSpec,
  base: { type?: string; format?: string },
  description: string
): TSchema {
  if (base.type === undefined) return Type.Unknown({ description })
  const type = field.nullable === true ? [base.type, 'null'] : base.type
  return Type.Unsafe({
    type,
    ...(base.format ? { format: base.format } : {}),
    ...(field.format ? { format: field.format } : {}),
    description
  })
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
    return Type.Array(kind.arrayOf === 'json' ? Type.Unknown() : Type.Ref(kind.arrayOf.id), {
      description
    })
  }
  if (kind === 'date-with-time') {
    return scalarSchema(
      field,
      SCALAR.date,
      `${field.description}: the day in the hub's calendar, \`YYYY-MM-DD\`. Hub field: ` +
      `\`${field.upstream}\` (its date).`
    )
  }
  return scalarSchema(field, SCALAR[kind], description)
}

/** The date-time of a `date-with-time` field, under its second name. */
function dateTimeSchema (field: FieldSpec): TSchema {
  return scalarSchema(
    field,
    SCALAR.datetime,
    `${field.description}, with the time of day the hub sends: ISO 8601 with the hub's offset. ` +
    `Hub field: \`${field.upstream}\`.`
  )
}

/** What `hubExtra` is, in every resource's schema. */
const HUB_EXTRA_DESCRIPTION =
  'The fields the hub sent beyond the documented ones, under their names camelCased (all the way ' +
  'down); ' +
  'present only when there are some. Undocumented: their names and values may change with the hub.'

/**
 * The response schema of a resource: every field the spec names, required
 * where the spec says the hub always sends it (`required`, and the fields
 * filled from the request), optional otherwise, and closed: what the hub
 * adds beyond the spec is under `hubExtra`, so a misspelt field is no field.
 */
export function resourceSchema (spec: ResourceSpec): TObject {
  const properties: Record<string, TSchema> = {}
  const required = new Set([
    ...(spec.required ?? []),
    ...spec.fields.filter((f) => f.fromRequest === true).map((f) => f.upstream)
  ])
  for (const field of spec.fields) {
    const schemas = [
      fieldSchema(field),
      ...(namesOf(field).length === 2 ? [dateTimeSchema(field)] : [])
    ]
    namesOf(field).forEach((name, i) => {
      // A date-with-time's date-time is left out where the hub sends the day alone (a profile's
      // dateAnswered): never required.
      properties[name] =
        required.has(field.upstream) && i === 0 ? schemas[i]! : Type.Optional(schemas[i]!)
    })
  }
  if (HUB_EXTRA in properties) throw new Error(`resource ${spec.id}: a field is named ${HUB_EXTRA}`)
  properties[HUB_EXTRA] = Type.Optional(
    Type.Unsafe<Record<string, unknown>>({
      type: 'object',
      additionalProperties: true,
      description: HUB_EXTRA_DESCRIPTION
    })
  )
  return Type.Object(properties, {
    $id: spec.id,
    title: spec.title,
    description: `${spec.title}. Fields the hub sends beyond these are under \`${HUB_EXTRA}\`, ` +
      'present only when there are some.',
    additionalProperties: false
  })
}
