import { OPERATIONS, type OperationId } from '../../src/catalogue/operations.ts'
import { camelCase, HUB_EXTRA, isArrayKind, isResource, namesOf, type FieldSpec, type ResourceSpec, type ScalarKind } from '../../src/catalogue/resource-spec.ts'
import { ALL_RESOURCES } from '../../src/catalogue/resources.ts'
import type { HubOperation, ParamKind, RequestBodyField } from '../../src/catalogue/types.ts'
import { toCompactDate, toIsoDate, toIsoDateTime } from '../../src/domain/dates.ts'
import { BUILT_IN } from '../../src/profile/built-in.ts'
import { PARAM_SCHEMAS } from '../../src/schemas/params.ts'

/**
 * The glossary: every hub name and the gateway's name for it, derived from
 * the catalogue that drives the gateway: the resource specs, the
 * operations' parameters and the request bodies. Rendered into
 * `docs/reference/glossary.md` by `npm run openapi`; a test fails when the
 * committed file differs.
 */

export interface GlossaryRow {
  /** The hub's name. */
  upstream: string
  /** Our name (a field, a parameter, a setting). */
  gateway: string
  /** Where the name appears: a resource (component schema) or the hub operations taking it. */
  where: string
  /** Kind of the value and how it is converted on the way. */
  conversion: string
  description: string
}

export interface RequestBody {
  operation: OperationId
  /** The gateway route whose call sends this body. */
  route: string
  note: string | undefined
  fields: readonly RequestBodyField[]
}

/** `/v1/sp2/documents/:sp2Id/finalization` -> `/v1/sp2/documents/{sp2Id}/finalization` */
function routePath (url: string): string {
  return url.replace(/:([A-Za-z0-9]+)/g, '{$1}')
}

/**
 * The request bodies the writes send, from their catalogue entries. A test
 * checks that these are exactly the keys `toUpstreamOffer`,
 * `toUpstreamBooked` and `toUpstreamFinalization` produce.
 */
export const REQUEST_BODIES: readonly RequestBody[] = (OPERATIONS as readonly HubOperation[]).flatMap(op => op.requestBody === undefined
  ? []
  : [{ operation: op.id as OperationId, route: `${op.route.method} ${routePath(op.route.url)}`, note: op.requestBody.note, fields: op.requestBody.fields }])

/** How each kind of request parameter is sent to the hub (src/upstream/resolve-operations.ts `toUpstreamValue`). */
const PARAM_CONVERSIONS: Record<ParamKind, string> = {
  npwp: 'dots and dashes stripped (15 or 16 digits)',
  blNo: 'as is',
  blDate: '`YYYY-MM-DD` → `YYYYMMDD` (the hub profile\'s `dateSent`)',
  containerNo: 'upper-cased',
  pibNo: 'as is',
  bookingRequestId: 'as is',
  sp2Id: 'as is'
}

const SCALAR_CONVERSIONS = {
  string: 'string',
  text: 'string (a number becomes text)',
  integer: 'integer',
  number: 'number',
  flag: '0/1 → boolean',
  date: '`YYYY-MM-DD`, kept',
  datetime: '`YYYY-MM-DD HH:MM:SS(.S)` → ISO date-time with offset',
  'date-with-time': '`YYYY-MM-DD HH:MM:SS(.S)` → its date, `YYYY-MM-DD` (the day in the hub\'s calendar)',
  json: 'any JSON, keys camelCased'
} as const satisfies Record<ScalarKind, string>

function descriptionOf (schema: object): string {
  return 'description' in schema && typeof schema.description === 'string' ? schema.description : ''
}

function resourceLink (spec: ResourceSpec): string {
  return `[\`${spec.id}\`](#${spec.id.toLowerCase()})`
}

function fieldConversion (field: FieldSpec): string {
  const { kind } = field
  let text: string
  if (isResource(kind)) text = `object: ${resourceLink(kind)}`
  else if (isArrayKind(kind)) text = kind.arrayOf === 'json' ? 'array of any JSON, keys camelCased' : `array of ${resourceLink(kind.arrayOf)}`
  else text = SCALAR_CONVERSIONS[kind]
  if (field.format === 'uuid') text += ' (UUID)'
  if (field.emptyAsNull === true) text += '; empty string or null → null'
  else if (field.nullable === true) text += ', or null'
  if (field.fromRequest === true) text += '; always answered: filled from the request the hub accepted (its echo gives way)'
  return text
}

function resourceRows (spec: ResourceSpec): GlossaryRow[] {
  return spec.fields.flatMap(field => namesOf(field).map((name, i) => ({
    upstream: field.upstream,
    gateway: name,
    where: spec.id,
    conversion: i === 0 ? `${fieldConversion(field)}${spec.required?.includes(field.upstream) === true ? '; **required**' : ''}` : `${SCALAR_CONVERSIONS.datetime}${field.nullable === true ? ', or null' : ''}`,
    description: i === 0 ? field.description : `${field.description}, with its time of day`
  })))
}

/** Every date the hub sends in an answer or is sent in a request, once per hub field and resource. */
export interface DateRow {
  upstream: string
  where: string
  hubForm: string
  gateway: string
  example: string
}

const HUB_FORMS: Partial<Record<ScalarKind, string>> = {
  date: '`YYYY-MM-DD` (a day)',
  datetime: '`YYYY-MM-DD HH:MM:SS` or `YYYY-MM-DD HH:MM:SS.S` (a moment, local time)',
  'date-with-time': '`YYYY-MM-DD HH:MM:SS.S` (a day, with a time of day)'
}

const HUB_EXAMPLES: Partial<Record<ScalarKind, string>> = { date: '2024-04-23', datetime: '2024-03-01 08:15:00', 'date-with-time': '2023-01-01 03:20:00.0' }

/**
 * The dates of the dialect, one row per hub field: a day is `YYYY-MM-DD`
 * (in the hub's calendar, never moved to another zone); a moment is an ISO
 * date-time with the hub's offset; a day the hub sends with a time of day is
 * both, under two names. Request parameters and bodies close the table.
 */
export function dateRows (offset: string): DateRow[] {
  const rows: DateRow[] = []
  const seen = new Set<ResourceSpec>()
  const visit = (spec: ResourceSpec) => {
    if (seen.has(spec)) return
    seen.add(spec)
    for (const field of spec.fields) {
      const kind = field.kind
      if (typeof kind !== 'string' || HUB_FORMS[kind] === undefined) continue
      const sample = HUB_EXAMPLES[kind] ?? ''
      const names = namesOf(field)
      const values = kind === 'date' ? [toIsoDate(sample)] : kind === 'datetime' ? [toIsoDateTime(sample, offset)] : [toIsoDate(sample), toIsoDateTime(sample, offset)]
      rows.push({
        upstream: field.upstream,
        where: spec.id,
        hubForm: HUB_FORMS[kind] ?? '',
        gateway: names.map(n => `\`${n}\``).join(' and '),
        example: `\`${sample}\` → ${names.map((n, i) => `\`${n}\`: \`${values[i] ?? ''}\``).join(', ')}`
      })
    }
  }
  ALL_RESOURCES.forEach(visit)
  const params = new Map<string, string[]>()
  for (const op of OPERATIONS as readonly HubOperation[]) {
    for (const param of op.params) if (param.kind === 'blDate') params.set(param.upstream, [...(params.get(param.upstream) ?? []), `\`${op.id}\``])
  }
  for (const [upstream, ops] of params) {
    rows.push({ upstream, where: `parameter of ${ops.join(', ')}`, hubForm: '`YYYYMMDD`', gateway: '`blDate`', example: `\`blDate\`: \`2024-04-23\` → \`${toCompactDate('2024-04-23')}\`` })
  }
  for (const body of REQUEST_BODIES) {
    for (const field of body.fields) {
      if (!field.conversion.includes('HH:MM:SS')) continue
      rows.push({ upstream: field.upstream, where: `body of \`${body.operation}\``, hubForm: '`YYYY-MM-DD HH:MM:SS` (local time)', gateway: field.gateway.startsWith('(') ? field.gateway : `\`${field.gateway}\``, example: field.conversion })
    }
  }
  return rows
}

/** One row per distinct upstream/gateway parameter pair, listing the operations (in table order) that take it. */
function parameterRows (): GlossaryRow[] {
  const rows = new Map<string, { row: GlossaryRow, operations: string[] }>()
  for (const op of OPERATIONS as readonly HubOperation[]) {
    for (const param of op.params) {
      const key = `${param.upstream}\u0000${param.name}`
      let entry = rows.get(key)
      if (entry === undefined) {
        entry = {
          row: {
            upstream: param.upstream,
            gateway: param.name,
            where: '',
            conversion: PARAM_CONVERSIONS[param.kind],
            description: descriptionOf(PARAM_SCHEMAS[param.kind])
          },
          operations: []
        }
        rows.set(key, entry)
      }
      entry.operations.push(`\`${op.id}\``)
    }
  }
  return [...rows.values()].map(({ row, operations }) => ({ ...row, where: `parameter of ${operations.join(', ')}` }))
}

function bodyRows (): GlossaryRow[] {
  return REQUEST_BODIES.flatMap(body => body.fields.map(field => ({
    upstream: field.upstream,
    gateway: field.gateway,
    where: `body of \`${body.operation}\``,
    conversion: field.conversion,
    description: field.description
  })))
}

/** Every mapping, in a stable order: resource fields (ALL_RESOURCES order), request parameters, request bodies. */
export function glossaryRows (): GlossaryRow[] {
  return [...ALL_RESOURCES.flatMap(resourceRows), ...parameterRows(), ...bodyRows()]
}

export interface ResponseKeyRow {
  operation: string
  key: string
  item: string
  /** Why the entry looks the way it does (the catalogue entry's `note`), or ''. */
  note: string
}

/** Which key each keyed-list operation answers under. */
export function responseKeyRows (): ResponseKeyRow[] {
  const rows: ResponseKeyRow[] = []
  for (const op of OPERATIONS as readonly HubOperation[]) {
    if (op.response.type === 'keyed-list') rows.push({ operation: op.id, key: op.response.key, item: op.response.item.id, note: op.note ?? '' })
  }
  return rows
}

function cell (text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ')
}

function table (header: string[], rows: string[][]): string {
  return [
    `| ${header.join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map(row => `| ${row.map(cell).join(' | ')} |`)
  ].join('\n')
}

function code (text: string): string {
  return `\`${text}\``
}

/** The Markdown of `docs/reference/glossary.md`. Deterministic: the same tables, the same text. */
export function renderGlossary (): string {
  const offset = BUILT_IN.timeZone
  const unknownExample = 'Data BL BC 2.0'
  const dateTimeExample = '2024-03-01 08:15:00.5'
  const out: string[] = [
    '# Glossary: hub names to gateway names',
    '',
    '<!-- Generated by `npm run openapi` from the catalogue (src/catalogue/) by scripts/docs/glossary.ts. Do not edit. -->',
    '',
    'Every name the customs hub uses maps to one name of the gateway\'s dialect: camelCase English. ' +
      'The tables below list, for each resource the gateway answers with, each hub field and the field it becomes, ' +
      'then the request parameters and request bodies the gateway sends, then the keys the hub answers its lists under.',
    '',
    '## Conversions',
    '',
    `- 0/1 flags become booleans: ${code('1')} → ${code('true')}, ${code('0')} → ${code('false')}.`,
    `- Date-times ${code('YYYY-MM-DD HH:MM:SS')} and ${code('YYYY-MM-DD HH:MM:SS.S')} ` +
      'are the hub\'s ' +
      'local time; they become ISO 8601 date-times with the hub\'s offset ' +
      `(the hub profile's ${code('timeZone')}, default ${code(offset)}): ` +
      `${code(dateTimeExample)} → ${code(toIsoDateTime(dateTimeExample, offset))}.`,
    `- A day the hub sends with a time of day (BL lists and declarations: ${code('2023-01-01 03:20:00.0')}) is answered twice: its date under the field's name ` +
      `(${code('blDate')}: ${code('2023-01-01')}, the day in the hub's calendar, the form the lookups take) and its date-time under the same name with ${code('Time')} ` +
      `(${code('blDateTime')}: ${code(toIsoDateTime('2023-01-01 03:20:00.0', offset))}). A browser that cut the day out of the date-time in its own zone would get another day. ` +
      'The table [Dates and times](#dates-and-times) lists every date.',
    `- Dates ${code('YYYY-MM-DD')} are kept as they are.`,
    `- Request dates: the hub takes ${code('YYYYMMDD')}; callers write ${code('YYYY-MM-DD')} (${code('2024-03-01')} → ${code(toCompactDate('2024-03-01'))}).`,
    `- Request date-times (offers): an ISO date-time with offset becomes ${code('YYYY-MM-DD HH:MM:SS')} in the hub's local time.`,
    `- An empty ${code('gate_pass')} becomes ${code('null')}, like a null one.`,
    `- Fields the hub sends beyond those listed are kept, their keys camelCased all the way down (${code(unknownExample)} → ${code(camelCase(unknownExample))}), under the record's ${code(HUB_EXTRA)}, which is there only when the hub sent some; none is silently dropped, and none is beside ours.`,
    '- A field marked **required** is in every record: the hub always sends it, and a record without it (or with null where it may not be) is UPSTREAM_BAD_RESPONSE. The others may be absent.',
    `- A listed field the hub spells another way (${code('id_request_booking')}, ${code('IdRequestBooking')} or ${code('bookingRequestId')} for ${code('idRequestBooking')}: any key that camelCases to the field's hub name or to ours) is that field: renamed and converted like it, and dropped where the field is answered already (write answers always answer the request's own fields). One thing never comes back under two names.`,
    '',
    '## Resources',
    ''
  ]
  for (const spec of ALL_RESOURCES) {
    out.push(`### ${spec.id}`, '', `${spec.title}: ${linked(spec.source)}.`, '')
    out.push(table(['Upstream', 'Gateway', 'Kind / conversion', 'Description'],
      resourceRows(spec).map(r => [code(r.upstream), code(r.gateway), r.conversion, r.description])))
    out.push('')
  }

  out.push('## Dates and times', '',
    'Every date the hub sends or is sent, and what it becomes. A day is `YYYY-MM-DD`, in the hub\'s calendar, on every route; ' +
      `a moment is an ISO 8601 date-time with the hub's offset (default ${code(offset)}); a day sent with a time of day is both, under two names.`, '')
  out.push(table(['Upstream', 'Where', 'Hub form', 'Gateway', 'Example'],
    dateRows(offset).map(r => [code(r.upstream), r.where, r.hubForm, r.gateway, r.example])))
  out.push('')

  out.push('## Request parameters', '',
    'Parameters of the gateway routes (query string or path) and the hub parameter each is sent as. ' +
      'Upstream names can be changed per operation with a hub profile (`params`, ' +
      '[profile.md](profile.md)).', '')
  out.push(table(['Upstream', 'Gateway', 'Where', 'Conversion', 'Description'],
    parameterRows().map(r => [code(r.upstream), code(r.gateway), r.where, r.conversion, r.description])))
  out.push('')

  out.push('## Request bodies', '')
  for (const body of REQUEST_BODIES) {
    out.push(`### ${code(body.operation)}`, '', `Sent by ${code(body.route)}.${body.note === undefined ? '' : ` ${body.note}.`}`, '')
    out.push(table(['Upstream', 'Gateway', 'Conversion', 'Description'],
      body.fields.map(f => [code(f.upstream), f.gateway.startsWith('(') ? f.gateway : code(f.gateway), f.conversion, f.description])))
    out.push('')
  }

  out.push('## Response keys', '',
    'The list operations below answer with an object holding one array under a key of the hub\'s choosing. ' +
      'The gateway always answers the list under `data`. A different key can be set with a hub ' +
      'profile (`answerKey`, [profile.md](profile.md)); ' +
      'when the expected key is missing but exactly one array-valued key is present, that array is used and the drift is logged.', '')
  out.push(table(['Operation', 'Upstream key', 'Gateway', 'Items', 'Note'],
    responseKeyRows().map(r => [code(r.operation), code(r.key), code('data'), `[${code(r.item)}](#${r.item.toLowerCase()})`, r.note])))
  out.push('')
  return out.join('\n')
}

/** A spec's source with its references (`docs/<page>.md#<anchor>`) as links from this page. */
function linked (source: string): string {
  return source.replace(/docs\/(([\w-]+\.md)#[\w-]+)/g,
    (_ref, target: string, page: string) => `[${page}](../${target})`)
}
