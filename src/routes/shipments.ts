import type { FastifyInstance } from 'fastify'
import { operationOf, operationsOf, type OperationId } from '../catalogue/operations.ts'
import type { DocumentType, HubOperation } from '../catalogue/types.ts'
import { errorResponses, UPSTREAM_STATUSES } from '../schemas/envelope.ts'
import { paramsObject } from '../schemas/params.ts'
import { Type, type TSchema } from '../schemas/typebox.ts'
import type { CallResult } from '../upstream/client.ts'
import { setCacheHeaders, wantsFresh } from './cache-headers.ts'
import { failedSource, settleAtMost, SourceOutcomeFields, type FailedSource } from './sources.ts'

/**
 * GET /v1/shipments/{blNo}: what a page showing one shipment needs, from
 * one call. The parts and the hub lookups behind them come from the
 * catalogue: the BC 2.0 declarations filed against the BL, the container
 * list of the BL's customs document type (a document type added to the
 * catalogue is taken in with nothing to change here), and the cargo owner's
 * SP2 documents of the BL, which carry their containers and gate passes.
 */

const CONTAINER_LISTS = operationsOf('container-list')
const DECLARATIONS: OperationId = 'BC20ByNoBL'
const SP2_DOCUMENTS: OperationId = 'document_sp2/host-to-host'

/** Every customs document type the catalogue has a BL list or a container list of, in catalogue order. */
const DOCUMENT_TYPES: readonly DocumentType[] = [...new Map([...operationsOf('bl-list'), ...CONTAINER_LISTS]
  .map(op => [op.documentType.code, op.documentType])).values()]

const PARTS = ['declarations', 'containers', 'sp2Documents'] as const
type Part = typeof PARTS[number]

/** The values a shipment is named by, which its lookups take a subset of. */
interface Shipment { npwp: string, blNo: string, blDate: string, documentType: string }

/** One part of the page and the lookup that answers it, or why there is none. */
interface Source { part: Part, operation: OperationId | undefined, none?: string }

function sourcesOf (documentType: DocumentType): Source[] {
  return [
    { part: 'declarations', operation: DECLARATIONS },
    {
      part: 'containers',
      operation: CONTAINER_LISTS.find(op => op.documentType.code === documentType.code)?.id,
      none: `The hub has no container lookup for ${documentType.label}`
    },
    { part: 'sp2Documents', operation: SP2_DOCUMENTS }
  ]
}

const SourceSchema = Type.Object({
  part: Type.Enum(PARTS, { description: 'The member of `data` this source answers' }),
  operation: Type.Optional(Type.String({ description: 'The hub operation asked (none for a part the document type has no lookup for)' })),
  ...SourceOutcomeFields,
  status: Type.Enum(['ok', 'failed', 'none'], { description: 'Whether this source answered (`ok`), failed (`failed`: its part is null, `code` and `message` say why), or there is no such lookup for the document type (`none`: its part is null, `message` says why)' }),
  message: Type.Optional(Type.String({ description: 'Error message of a failed source, or why a part has no lookup' }))
}, { additionalProperties: false })

function part (itemId: string, what: string): TSchema {
  return Type.Union([Type.Array(Type.Ref(itemId)), Type.Null()], { description: `${what}; null when its source failed or there is no such lookup (see \`meta.sources\`), \`[]\` when the hub has none` })
}

const ShipmentSchema = Type.Object({
  blNo: Type.String({ description: 'Bill of lading number, as asked' }),
  blDate: Type.String({ format: 'date', description: 'Bill of lading date, as asked' }),
  documentType: Type.Enum(DOCUMENT_TYPES.map(type => type.code), { description: 'Customs document type of the BL, as asked' }),
  declarations: part('Bc20Declaration', 'The BC 2.0 declarations filed against the BL (`GET /v1/customs/bc20/declarations?blNo=`)'),
  containers: part('CustomsContainer', 'The containers of the BL in the container list of its document type (`GET /v1/customs/{documentType}/containers`); a list the hub answers for a whole day (BC 2.0, 2.5, 2.7) is narrowed to this BL\'s entries'),
  sp2Documents: part('Sp2Document', 'The cargo owner\'s SP2 documents of the BL, each with its containers and their gate passes (`GET /v1/sp2/documents`)')
}, { $id: 'Shipment', title: 'A shipment: one bill of lading and what the hub knows of it', additionalProperties: false })

const ResponseSchema = Type.Object({
  data: Type.Ref('Shipment'),
  meta: Type.Object({
    cached: Type.Boolean({ description: 'True when every source was answered from the gateway\'s cache' }),
    stale: Type.Optional(Type.Boolean({ description: 'True when a source\'s hub call failed and a stale cached answer was used' })),
    complete: Type.Boolean({ description: 'False when a source failed and its part is null' }),
    sources: Type.Array(SourceSchema, { description: 'One entry per part of `data`, in order' })
  }, { additionalProperties: false })
}, { additionalProperties: false, description: 'The shipment, and how each of its sources fared' })

const NULL = Buffer.from('null')

/**
 * A container list answered for a whole day (its lookup does not take the
 * BL number), or for a BL number on any day, narrowed to the shipment's
 * entries. An entry that does not say its BL number or date is kept: the
 * hub did not say it is another BL's.
 */
export function narrowed (op: HubOperation, json: Buffer, count: number | undefined, shipment: Shipment): { json: Buffer, count: number } {
  const taken = new Set(op.params.map(p => p.name))
  const blNo = taken.has('blNo') ? undefined : shipment.blNo.toUpperCase()
  const blDate = taken.has('blDate') ? undefined : shipment.blDate
  if (blNo === undefined && blDate === undefined) return { json, count: count ?? 0 }
  const items = JSON.parse(json.toString('utf8')) as Array<{ blNo?: unknown, blDate?: unknown }>
  const kept = items.filter(item =>
    (blNo === undefined || typeof item.blNo !== 'string' || item.blNo.toUpperCase() === blNo) &&
    (blDate === undefined || typeof item.blDate !== 'string' || item.blDate === blDate))
  return { json: kept.length === items.length ? json : Buffer.from(JSON.stringify(kept)), count: kept.length }
}

type SourceEntry = { part: Part, operation?: string } & ({ status: 'ok', count: number } | FailedSource | { status: 'none', message: string })

export default async function shipmentRoutes (app: FastifyInstance) {
  app.addSchema(ShipmentSchema)
  const placement = app.config.UPSTREAM_PARAM_PLACEMENT
  const query = paramsObject([{ name: 'npwp', kind: 'npwp' }, { name: 'blDate', kind: 'blDate' }], { placement })

  app.get('/v1/shipments/:blNo', {
    config: {
      // The answer is customs data and SP2 data: a client needs both scopes, as it would to ask for each part.
      scope: ['customs:read', 'sp2:read'],
      hubOperations: [DECLARATIONS, ...CONTAINER_LISTS.map(op => op.id), SP2_DOCUMENTS]
    },
    schema: {
      tags: ['shipments'],
      summary: 'One shipment: declarations, containers and SP2 documents of a bill of lading',
      operationId: 'getShipmentByBlNo',
      description: 'What a page showing one shipment needs, in one call: the BC 2.0 declarations filed against the bill of lading, ' +
        'its containers in the container list of its customs document type, and the cargo owner\'s SP2 documents of the BL with their ' +
        'containers and gate passes. The hub lookups are made at once (as many as the client may have in flight) ' +
        'and cached as the lookups are. A source that fails is reported in `meta.sources` ' +
        '(and `meta.complete` is false) and its part of `data` is null, while the others are answered; only when every source asked ' +
        'fails is the answer an error (that of the first). A document type without a container lookup (BC 1.6) has `containers: null` ' +
        'and a source of status `none`. `documentType` is the `documentType` of the BL in `GET /v1/taxpayers/{npwp}/bills-of-lading`.',
      params: paramsObject([{ name: 'blNo', kind: 'blNo' }], { placement }),
      querystring: Type.Object({
        ...query.properties,
        documentType: Type.Enum(DOCUMENT_TYPES.map(type => type.code), {
          description: 'Customs document type of the BL: which container list to ask (' + DOCUMENT_TYPES.map(type => `\`${type.code}\` ${type.label}`).join(', ') + ')',
          examples: ['bc20']
        })
      }, { additionalProperties: false }),
      response: { 200: ResponseSchema, ...errorResponses(UPSTREAM_STATUSES) }
    }
  }, async (request, reply) => {
    const { blNo } = request.params as { blNo: string }
    const { npwp, blDate, documentType: code } = request.query as { npwp: string, blDate: string, documentType: string }
    const documentType = DOCUMENT_TYPES.find(type => type.code === code)!
    const shipment: Shipment = { npwp, blNo, blDate, documentType: code }
    const fresh = wantsFresh(request)
    const sources = sourcesOf(documentType)
    const asked = sources.filter((source): source is Source & { operation: OperationId } => source.operation !== undefined)
    const settled = await settleAtMost(asked.map(({ operation }) => () =>
      app.hub.call(request, { operation, params: { npwp, blNo, blDate }, fresh })), app.config.UPSTREAM_MAX_CALLS_PER_CLIENT)

    const answered = new Map<Part, CallResult>()
    const outcomes = new Map<Part, PromiseSettledResult<CallResult>>()
    asked.forEach((source, i) => outcomes.set(source.part, settled[i]!))
    const parts: Buffer[] = [Buffer.from(`{"data":{"blNo":${JSON.stringify(blNo)},"blDate":"${blDate}","documentType":"${code}"`)]
    const entries: SourceEntry[] = sources.map(source => {
      const outcome = outcomes.get(source.part)
      parts.push(Buffer.from(`,"${source.part}":`))
      if (source.operation === undefined || outcome === undefined) {
        parts.push(NULL)
        return { part: source.part, status: 'none', message: source.none ?? 'No lookup' }
      }
      if (outcome.status === 'rejected') {
        parts.push(NULL)
        return { part: source.part, operation: source.operation, ...failedSource(outcome.reason) }
      }
      answered.set(source.part, outcome.value)
      const { json, count } = source.part === 'containers'
        ? narrowed(operationOf(source.operation), outcome.value.json, outcome.value.count, shipment)
        : { json: outcome.value.json, count: outcome.value.count ?? 0 }
      parts.push(json)
      return { part: source.part, operation: source.operation, status: 'ok', count }
    })
    const failures = settled.filter(result => result.status === 'rejected')
    if (failures.length === settled.length) throw (failures[0] as PromiseRejectedResult).reason
    const { cached, stale } = setCacheHeaders(reply, [...answered.values()].map(result => result.cache))
    const complete = failures.length === 0
    // A page must not keep an answer with a part missing: the next call asks again.
    if (!complete) reply.header('cache-control', 'no-store')
    const meta = { cached: cached && complete, ...(stale ? { stale } : {}), complete, sources: entries }
    parts.push(Buffer.from(`},"meta":${JSON.stringify(meta)}}`))
    // Each part is our JSON as the lookup answered it, copied in as bytes (the SP2 list runs to megabytes): nothing is parsed or serialized again.
    return reply.type('application/json; charset=utf-8').send(Buffer.concat(parts))
  })
}
