import { DOCUMENT_TYPES, operationsOf } from '../catalogue/operations.ts'
import { Type, type TSchema } from '../typebox.ts'
import { BlEntry } from '../catalogue/resources.ts'
import { HUB_EXTRA } from '../catalogue/resource-spec.ts'
import { resourceSchema } from './resource-schemas.ts'

/**
 * The answers composed of several lookups: a taxpayer's BL lists
 * (routes/taxpayers.ts) and a shipment (routes/shipments.ts). Their shared
 * schemas (`TaxpayerBillOfLading`, `Shipment`) are registered with the
 * resources (plugins/swagger.ts, COMPOSED_SCHEMAS) rather than by their
 * routes, so that no route adds a schema set of its own and every answer
 * shares the serializers of the others (schemas/serializers.ts).
 */

/** The members of a shipment's `data` that each come from one source, in order. */
export const SHIPMENT_PARTS = ['declarations', 'containers', 'sp2Documents'] as const

/** How a source that was asked fared, in `meta.sources`. */
export const SourceOutcomeFields = {
  status: Type.Enum(['ok', 'failed'], { description: 'Whether this source answered' }),
  count: Type.Optional(Type.Integer({ minimum: 0, description: 'Entries from this source' })),
  code: Type.Optional(Type.String({ description: 'Error code of a failed source' })),
  message: Type.Optional(Type.String({ description: 'Error message of a failed source' })),
  upstreamMessage: Type.Optional(
    Type.String({ description: "The hub's own message, when it answered a 4xx with one" })
  )
}

const SourceSchema = Type.Object(
  {
    part: Type.Enum(SHIPMENT_PARTS, { description: 'The member of `data` this source answers' }),
    operation: Type.Optional(
      Type.String({
        description: 'The hub operation asked (none for a part the document type has no lookup for)'
      })
    ),
    ...SourceOutcomeFields,
    status: Type.Enum(['ok', 'failed', 'none'], {
      description:
        'Whether this source answered (`ok`), failed (`failed`: its part is null, `code` and ' +
        '`message` say why), or there is no such lookup for the document type (`none`: its part ' +
        'is null, `message` says why)'
    }),
    message: Type.Optional(
      Type.String({ description: 'Error message of a failed source, or why a part has no lookup' })
    )
  },
  { additionalProperties: false }
)

function part (itemId: string, what: string): TSchema {
  return Type.Union([Type.Array(Type.Ref(itemId)), Type.Null()], {
    description: `${what}; null when its source failed or there is no such lookup (see ` +
      '`meta.sources`), `[]` when the hub has none'
  })
}

export const ShipmentSchema = Type.Object(
  {
    blNo: Type.String({ description: 'Bill of lading number, as asked' }),
    blDate: Type.String({ format: 'date', description: 'Bill of lading date, as asked' }),
    documentType: Type.Enum(
      DOCUMENT_TYPES.map((type) => type.code),
      { description: 'Customs document type of the BL, as asked' }
    ),
    declarations: part(
      'Bc20Declaration',
      'The BC 2.0 declarations filed against the BL (`GET /v1/customs/bc20/declarations?blNo=`)'
    ),
    containers: part(
      'CustomsContainer',
      'The containers of the BL in the container list of its document type (`GET ' +
      '/v1/customs/{documentType}/containers`); a list the hub answers for a whole day (BC 2.0, ' +
      "2.5, 2.7) is narrowed to this BL's entries"
    ),
    sp2Documents: part(
      'Sp2Document',
      "The cargo owner's SP2 documents of the BL, each with its containers and their gate passes " +
      '(`GET /v1/sp2/documents`)'
    )
  },
  {
    $id: 'Shipment',
    title: 'A shipment: one bill of lading and what the hub knows of it',
    additionalProperties: false
  }
)

export const ShipmentResponseSchema = Type.Object(
  {
    data: Type.Ref('Shipment'),
    meta: Type.Object(
      {
        cached: Type.Boolean({
          description: "True when every source was answered from the gateway's cache"
        }),
        stale: Type.Optional(
          Type.Boolean({
            description: "True when a source's hub call failed and a stale cached answer was used"
          })
        ),
        complete: Type.Boolean({ description: 'False when a source failed and its part is null' }),
        sources: Type.Array(SourceSchema, { description: 'One entry per part of `data`, in order' })
      },
      { additionalProperties: false }
    )
  },
  { additionalProperties: false, description: 'The shipment, and how each of its sources fared' }
)

const BL_LIST_TYPES = operationsOf('bl-list').map(op => op.documentType.code)

// The BL list entry's fields and its tag in one closed object: an allOf of the closed entry and the
// tag would admit neither.
const BillOfLading = resourceSchema(BlEntry)
export const TaxpayerBillOfLadingSchema = Type.Object(
  {
    ...BillOfLading.properties,
    documentType: Type.Enum(BL_LIST_TYPES, {
      description: 'Customs document type of the list the entry came from'
    })
  },
  {
    $id: 'TaxpayerBillOfLading',
    title: 'Bill of lading of a taxpayer, tagged with its document type',
    description: 'A BL list entry (`BillOfLading`) with its `documentType`. Fields the hub ' +
      `sends beyond these are under \`${HUB_EXTRA}\`, present only when there are some.`,
    additionalProperties: false
  }
)

const TaxpayerSourceSchema = Type.Object({
  documentType: Type.Enum(BL_LIST_TYPES, { description: 'Customs document type' }),
  operation: Type.String({ description: 'The hub operation asked' }),
  ...SourceOutcomeFields
}, { additionalProperties: false })

export const TaxpayerBillsOfLadingResponseSchema = Type.Object(
  {
    data: Type.Array(Type.Ref('TaxpayerBillOfLading')),
    meta: Type.Object(
      {
        count: Type.Integer({ minimum: 0, description: 'Number of items in `data`' }),
        cached: Type.Boolean({
          description: "True when every source was answered from the gateway's cache"
        }),
        stale: Type.Optional(
          Type.Boolean({
            description: "True when a source's hub call failed and a stale cached answer was used"
          })
        ),
        complete: Type.Boolean({
          description: 'False when a source failed and its entries are missing'
        }),
        sources: Type.Array(TaxpayerSourceSchema, {
          description: 'One entry per BL list asked, in order'
        })
      },
      { additionalProperties: false }
    )
  },
  { additionalProperties: false }
)

/** The shared schemas of the composed answers, for `components.schemas`. */
export const COMPOSED_SCHEMAS = [TaxpayerBillOfLadingSchema, ShipmentSchema]
