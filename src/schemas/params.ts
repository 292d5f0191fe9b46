import type { ParamKind } from '../catalogue/types.ts'
import { EXAMPLES } from './examples.ts'
import {
  BL_DATE_PATTERN,
  BL_DATE_YEARS,
  BL_NO,
  BL_NO_SEGMENT,
  BOOKING_REQUEST_ID,
  PIB_NO
} from './formats.ts'
import { Type, type TObject, type TString } from '../typebox.ts'

/**
 * One schema per gateway parameter kind (docs/api.md#routes). The format each
 * names carries the rule a caller reads when a value breaks it
 * (schemas/formats.ts); a pattern beside a format is the same rule, written
 * for clients that check input themselves.
 */
export const PARAM_SCHEMAS: Record<ParamKind, TString> = {
  npwp: Type.String({
    format: 'npwp',
    maxLength: 24,
    description:
      'Taxpayer number (NPWP): 15 or 16 digits; dots and dashes are accepted and stripped',
    examples: [EXAMPLES.npwp]
  }),
  blNo: Type.String({
    format: 'bl-no',
    pattern: BL_NO.pattern,
    description: 'Bill of lading number: 1-35 characters, letters, digits and `. / -`',
    examples: [EXAMPLES.blNo]
  }),
  blDate: Type.String({
    format: 'bl-date',
    pattern: BL_DATE_PATTERN,
    description: `Bill of lading date, \`YYYY-MM-DD\`, in the years ${BL_DATE_YEARS.first} to ` +
      `${BL_DATE_YEARS.last}: the \`blDate\` of the bill of lading lists, the day in the hub's ` +
      'calendar',
    examples: [EXAMPLES.blDate]
  }),
  containerNo: Type.String({
    format: 'iso6346',
    pattern: '^[A-Za-z]{4}[0-9]{7}$',
    description:
      'Container number (ISO 6346: 4 letters, 7 digits, valid check digit; case-insensitive)',
    examples: [EXAMPLES.containerNo]
  }),
  pibNo: Type.String({
    format: 'pib-no',
    pattern: PIB_NO.pattern,
    description: 'PIB (import declaration) number',
    examples: [EXAMPLES.pibNo]
  }),
  bookingRequestId: Type.String({
    format: 'booking-request-id',
    pattern: BOOKING_REQUEST_ID.pattern,
    description: "Booking request code (from the hub's API-01)",
    examples: [EXAMPLES.bookingRequestId]
  }),
  sp2Id: Type.String({
    format: 'uuid',
    description: 'SP2 document id (UUID)',
    examples: [EXAMPLES.sp2Id]
  })
}

/** The schemas that replace PARAM_SCHEMAS's where a value becomes a segment of the hub's path. */
const PATH_SEGMENT_SCHEMAS: Partial<Record<ParamKind, TString>> = {
  blNo: Type.String({
    format: 'bl-no-segment',
    pattern: BL_NO_SEGMENT.pattern,
    description: 'Bill of lading number: 1-35 characters, letters, digits and `. -`',
    examples: [EXAMPLES.blNo]
  })
}

/**
 * One parameter kind's schema; `inPath` where the hub takes the value as a path segment (its
 * path-safe rule).
 */
export function paramSchema (kind: ParamKind, inPath = false): TString {
  return (inPath ? PATH_SEGMENT_SCHEMAS[kind] : undefined) ?? PARAM_SCHEMAS[kind]
}

export interface ParamsObjectOptions {
  /** Example values by parameter name (the route's own, where the kind's would not answer). */
  examples?: Readonly<Record<string, string>> | undefined
}

/**
 * The querystring or params object of a route, from the parameters its
 * operation takes; a value the hub takes as a path segment (`inPath`) gets
 * its path-safe rule. Their names are the catalogue's data, so the type says
 * what holds for every one: a string.
 */
export function paramsObject (
  params: ReadonlyArray<{ name: string; kind: ParamKind; inPath?: boolean }>,
  { examples = {} }: ParamsObjectOptions = {}
): TObject<Record<string, TString>> {
  const properties: Record<string, TString> = {}
  for (const p of params) {
    const schema = paramSchema(p.kind, p.inPath === true)
    const example = examples[p.name]
    properties[p.name] =
      example === undefined ? schema : Type.String({ ...schema, examples: [example] })
  }
  return Type.Object(properties, { additionalProperties: false })
}
