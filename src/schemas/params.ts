import type { ParamKind } from '../upstream/operations.ts'
import { EXAMPLES } from './examples.ts'
import { Type, type TSchema, type TString } from './typebox.ts'

/**
 * One schema per gateway parameter kind (contract.md 3), with the human rule
 * the error handler names when a value breaks it.
 */
export const PARAM_RULES: Record<ParamKind | 'sp2Id', { rule: string, schema: TString, pathSchema?: TString }> = {
  npwp: {
    rule: 'must be a taxpayer number of 15 or 16 digits (dots and dashes are allowed and ignored)',
    schema: Type.String({ format: 'npwp', minLength: 15, maxLength: 24, description: 'Taxpayer number (NPWP): 15 or 16 digits; dots and dashes are accepted and stripped', examples: [EXAMPLES.npwp] })
  },
  blNo: {
    rule: 'must be 1 to 35 characters: letters, digits, and . / - (starting with a letter or digit; no / where the hub takes its parameters in the path)',
    schema: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9./-]{0,34}$', description: 'Bill of lading number: 1-35 characters, letters, digits and `. / -`', examples: [EXAMPLES.blNo] }),
    // With UPSTREAM_PARAM_PLACEMENT=path the value becomes a path segment: a `/` (sent as %2F) would
    // let a hub or proxy that decodes %2F read `A/../../X` as another address.
    pathSchema: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9.-]{0,34}$', description: 'Bill of lading number: 1-35 characters, letters, digits and `. -` (no `/`: the hub takes its parameters in the path)', examples: [EXAMPLES.blNo] })
  },
  blDate: {
    rule: 'must be a real calendar date written YYYY-MM-DD, in the years 1900 to 2100',
    // The years bounded to a plausible range: `0000-01-01` is a calendar date too, but no BL's.
    schema: Type.String({ format: 'date', pattern: '^(19[0-9]{2}|20[0-9]{2}|2100)-', description: 'Bill of lading date, `YYYY-MM-DD`, in the years 1900 to 2100 (sent to the hub as `YYYYMMDD`)', examples: [EXAMPLES.blDate] })
  },
  containerNo: {
    rule: 'must be an ISO 6346 container number: 4 letters, 7 digits, with a valid check digit',
    schema: Type.String({ format: 'iso6346', pattern: '^[A-Za-z]{4}[0-9]{7}$', description: 'Container number (ISO 6346: 4 letters, 7 digits, valid check digit; case-insensitive)', examples: [EXAMPLES.containerNo] })
  },
  pibNo: {
    rule: 'must be 1 to 30 characters: letters, digits and - (starting with a letter or digit)',
    schema: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9-]{0,29}$', description: 'PIB (import declaration) number', examples: [EXAMPLES.pibNo] })
  },
  bookingRequestId: {
    rule: 'must be 1 to 64 characters: letters, digits and . _ : - (starting with a letter or digit)',
    schema: Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$', description: 'Booking request code (from the hub\'s API-01)', examples: [EXAMPLES.bookingRequestId] })
  },
  sp2Id: {
    rule: 'must be a UUID',
    schema: Type.String({ format: 'uuid', description: 'SP2 document id (UUID)', examples: [EXAMPLES.sp2Id] })
  }
}

/**
 * The querystring or params object of a route, from the parameters its
 * operation takes. Where the hub takes them in its path (`placement`), the
 * values that become path segments get their path-safe rule.
 */
export function paramsObject (params: ReadonlyArray<{ name: string, kind: ParamKind, alwaysQuery?: boolean }>, placement: 'query' | 'path' = 'query'): TSchema {
  const properties: Record<string, TSchema> = {}
  for (const p of params) {
    const rule = PARAM_RULES[p.kind]
    properties[p.name] = placement === 'path' && p.alwaysQuery !== true ? rule.pathSchema ?? rule.schema : rule.schema
  }
  return Type.Object(properties, { additionalProperties: false })
}
