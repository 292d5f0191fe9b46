import type { FastifyInstance } from 'fastify'
import {
  DOCUMENT_TYPES,
  operationOf,
  operationsOf,
  type OperationId
} from '../catalogue/operations.ts'
import type { DocumentType, HubOperation } from '../catalogue/types.ts'
import { errorResponses, UPSTREAM_STATUSES } from '../schemas/envelope.ts'
import { paramSchema } from '../schemas/params.ts'
import { ShipmentResponseSchema, SHIPMENT_PARTS } from '../schemas/composed.ts'
import { Type, type TypeBoxTypeProvider } from '../typebox.ts'
import type { CallResult } from '../upstream/client.ts'
import { composedTag } from '../upstream/entity-tag.ts'
import { setCacheHeaders, wantsFresh } from './cache-headers.ts'
import { conditionalResponses, ConditionalHeadersSchema, notModified } from './conditional.ts'
import { failedSource, outcomeTag, settleAtMost, type FailedSource } from './sources.ts'

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

type Part = typeof SHIPMENT_PARTS[number]

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

const NULL = Buffer.from('null')

/**
 * A container list answered for a whole day (its lookup does not take the
 * BL number), or for a BL number on any day, narrowed to the shipment's
 * entries. An entry that does not say its BL number or date is kept: the
 * hub did not say it is another BL's.
 */
export function narrowed (
  op: HubOperation,
  json: Buffer,
  count: number | undefined,
  shipment: Shipment
): { json: Buffer; count: number } {
  const taken = new Set(op.params.map((p) => p.name))
  const blNo = taken.has('blNo') ? undefined : shipment.blNo.toUpperCase()
  const blDate = taken.has('blDate') ? undefined : shipment.blDate
  if (blNo === undefined && blDate === undefined) return { json, count: count ?? 0 }
  const items = JSON.parse(json.toString('utf8')) as Array<{ blNo?: unknown; blDate?: unknown }>
  const kept = items.filter(
    (item) =>
      (blNo === undefined || typeof item.blNo !== 'string' || item.blNo.toUpperCase() === blNo) &&
      (blDate === undefined || typeof item.blDate !== 'string' || item.blDate === blDate)
  )
  return {
    json: kept.length === items.length ? json : Buffer.from(JSON.stringify(kept)),
    count: kept.length
  }
}

type SourceEntry = { part: Part; operation?: string } & (
  { status: 'ok'; count: number } | FailedSource | { status: 'none'; message: string }
)

export default async function shipmentRoutes (app: FastifyInstance) {
  // A value that any of the shipment's hub operations takes as a path segment, with the profile in
  // force, gets the path-safe rule.
  const placed = new Set([DECLARATIONS, ...CONTAINER_LISTS.map(op => op.id), SP2_DOCUMENTS]
    .flatMap(id => app.hub.operations.get(id)!.params.filter(p => p.inPath).map(p => p.name)))
  const param = (name: 'npwp' | 'blNo' | 'blDate') => paramSchema(name, placed.has(name))

  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/v1/shipments/:blNo',
    {
      config: {
        // The answer is customs data and SP2 data: a client needs both scopes, as it would to ask
        // for each part.
        scope: ['customs:read', 'sp2:read'],
        hubOperations: [DECLARATIONS, ...CONTAINER_LISTS.map((op) => op.id), SP2_DOCUMENTS]
      },
      schema: {
        tags: ['shipments'],
        summary: 'One shipment: declarations, containers and SP2 documents of a bill of lading',
        operationId: 'getShipmentByBlNo',
        description:
          'What a page showing one shipment needs, in one call: the BC 2.0 declarations filed ' +
          'against the bill of lading, ' +
          'its containers in the container list of its customs document type, and the cargo ' +
          "owner's SP2 documents of the BL with their " +
          'containers and gate passes. The hub lookups are made at once (as many as the client ' +
          'may have in flight) ' +
          'and cached as the lookups are. A source that fails is reported in `meta.sources` ' +
          '(and `meta.complete` is false) and its part of `data` is null, while the others are ' +
          'answered; only when every source asked ' +
          'fails is the answer an error (that of the first). A document type without a container ' +
          'lookup (BC 1.6) has `containers: null` ' +
          'and a source of status `none`. `documentType` is the `documentType` of the BL in `GET ' +
          '/v1/taxpayers/{npwp}/bills-of-lading`.',
        params: Type.Object({ blNo: param('blNo') }, { additionalProperties: false }),
        querystring: Type.Object(
          {
            npwp: param('npwp'),
            blDate: param('blDate'),
            documentType: Type.Enum(
              DOCUMENT_TYPES.map((type) => type.code),
              {
                description:
                  'Customs document type of the BL: which container list to ask (' +
                  DOCUMENT_TYPES.map((type) => `\`${type.code}\` ${type.label}`).join(', ') +
                  ')',
                examples: ['bc20']
              }
            )
          },
          { additionalProperties: false }
        ),
        headers: ConditionalHeadersSchema,
        response: {
          ...conditionalResponses(ShipmentResponseSchema),
          ...errorResponses(UPSTREAM_STATUSES)
        }
      }
    },
    async (request, reply) => {
      const { blNo } = request.params
      const { npwp, blDate, documentType: code } = request.query
      const documentType = DOCUMENT_TYPES.find((type) => type.code === code)!
      const shipment: Shipment = { npwp, blNo, blDate, documentType: code }
      const fresh = wantsFresh(request)
      const sources = sourcesOf(documentType)
      const asked = sources.filter(
        (source): source is Source & { operation: OperationId } => source.operation !== undefined
      )
      const settled = await settleAtMost(
        asked.map(
          ({ operation }) =>
            () =>
              app.hub.call(request, { operation, params: { npwp, blNo, blDate }, fresh })
        ),
        app.config.UPSTREAM_MAX_CALLS_PER_CLIENT
      )

      const failures = settled.filter((result) => result.status === 'rejected')
      if (failures.length === settled.length) throw (failures[0] as PromiseRejectedResult).reason
      const { cached, stale } = setCacheHeaders(
        reply,
        settled.map((result) => (result.status === 'fulfilled' ? result.value.cache : undefined))
      )
      const complete = failures.length === 0
      // A page must not keep an answer with a part missing: the next call asks again.
      if (!complete) reply.header('cache-control', 'no-store')
      const outcomes = new Map<Part, PromiseSettledResult<CallResult>>(
        asked.map((source, i) => [source.part, settled[i]!])
      )
      // Known before anything is assembled: a 304 reads no part.
      const etag = composedTag([
        code,
        blNo,
        blDate,
        ...sources.map((source) => {
          const outcome = outcomes.get(source.part)
          return outcome === undefined ? 'none' : outcomeTag(outcome)
        })
      ])
      if (notModified(request, reply, etag)) return reply

      const parts: Buffer[] = [
        Buffer.from(
          `{"data":{"blNo":${JSON.stringify(blNo)},"blDate":"${blDate}","documentType":"${code}"`
        )
      ]
      const entries: SourceEntry[] = sources.map((source) => {
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
        const { json, count } =
          source.part === 'containers'
            ? narrowed(
              operationOf(source.operation),
              outcome.value.json,
              outcome.value.count,
              shipment
            )
            : { json: outcome.value.json, count: outcome.value.count ?? 0 }
        parts.push(json)
        return { part: source.part, operation: source.operation, status: 'ok', count }
      })
      const meta = {
        cached: cached && complete,
        ...(stale ? { stale } : {}),
        complete,
        sources: entries
      }
      parts.push(Buffer.from(`},"meta":${JSON.stringify(meta)}}`))
      // Each part is our JSON as the lookup answered it, copied in as bytes (the SP2 list runs to
      // megabytes): nothing is parsed or serialized again.
      return reply.type('application/json; charset=utf-8').send(Buffer.concat(parts))
    }
  )
}
