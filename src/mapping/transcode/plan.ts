import { OMIT, type Tolerance } from '../drift.ts'
import { fieldRules, isNull, spellingsOf, type FieldRules } from '../fields.ts'
import {
  isArrayKind,
  isResource,
  namesOf,
  type FieldSpec,
  type ResourceSpec
} from '../../catalogue/resource-spec.ts'
import { hashOf, NULL } from './reader.ts'
import { wordsOf } from './writer.ts'

/**
 * A resource spec compiled for the transcoder, once per operation: each
 * field's key as bytes, hash and words, our `"name":` as bytes and words,
 * its kind as a small integer for the value switch, and its rules
 * (fields.ts) with what they write for null and the empty string.
 */

// Field kinds, as small integers for the value switch.
export const STRING = 0 // 'string' and 'text' convert alike: a string, or a number as a string
export const INTEGER = 1
export const NUMBER = 2
export const FLAG = 3
export const DATE = 4
export const DATETIME = 5
export const JSON_CONTENT = 6
export const RECORD = 7
export const RECORD_ARRAY = 8
export const JSON_ARRAY = 9
export const DATE_WITH_TIME = 10
export const UUID = 11 // a string of format uuid

export interface Field {
  /** The upstream name, bytes. */
  readonly key: Buffer
  readonly hash: number
  /**
   * The key with its closing quote and a colon (`key":`, compact JSON) as
   * little-endian words at the offsets in `keyAt`, the last one overlapping:
   * the usual member is recognised in a few word comparisons. Empty for a
   * member shorter than a word.
   */
  readonly keyAt: Int32Array
  readonly keyWords: Int32Array
  /** `"ourName":` */
  readonly out: Buffer
  /**
   * `"ourName":` and `,"ourName":` as little-endian words, zero-padded to a multiple of 4 bytes.
   */
  readonly outWords: Int32Array
  readonly commaWords: Int32Array
  readonly kind: number
  /** DATE_WITH_TIME: `,"ourDateTimeName":`, written between the date and the date-time. */
  readonly second: Buffer | undefined
  /**
   * The rules of a scalar field (fields.ts), for the values no byte shortcut takes; undefined for
   * records and lists.
   */
  readonly rules: FieldRules | undefined
  /**
   * What the rules write for the hub's null; undefined where null does not fit (the reference path
   * reports it).
   */
  readonly nullOut: Buffer | undefined
  /**
   * What they write for an empty string where that is our null (gate_pass); undefined where it is a
   * string like any other.
   */
  readonly emptyOut: Buffer | undefined
  readonly record: Plan | undefined
  /** This field's bit in Plan.requiredMask, or 0. */
  readonly requiredBit: number
  readonly index: number
}

/**
 * What a plan learns as it reads: the hub writes a record's keys in one
 * order, so the key that followed a field in the last object read is tried
 * first. Only a prediction: a wrong one costs a lookup by hash, never a
 * different answer. Predictions start in the spec's order.
 */
export interface KeyOrder {
  /** The first field of the last object read. */
  first: Field | undefined
  /** By field index: the field that followed it in the last object read. */
  readonly next: Array<Field | undefined>
}

export interface Plan {
  readonly fields: readonly Field[]
  readonly byHash: ReadonlyMap<number, readonly Field[]>
  readonly requiredMask: number
  /**
   * Our names of the spec's fields and the other spellings of their hub names
   * (fields.ts spellingsOf): an unknown key camelCased onto one of them is
   * left to the reference path, which renames it.
   */
  readonly names: ReadonlySet<string>
  /**
   * The two parts of a plan that change as it is used, each by one run at a
   * time (runs are synchronous, and a plan belongs to one transcoder set):
   * the key order it has learned, and per field the serial of the object it
   * was last seen in (duplicate keys; serials come from the set, index.ts).
   */
  readonly order: KeyOrder
  readonly seen: Float64Array
}

function kindOf (field: FieldSpec): number {
  const { kind } = field
  if (isResource(kind)) return RECORD
  if (isArrayKind(kind)) return kind.arrayOf === 'json' ? JSON_ARRAY : RECORD_ARRAY
  switch (kind) {
    case 'string':
    case 'text': return field.format === 'uuid' ? UUID : STRING
    case 'integer': return INTEGER
    case 'number': return NUMBER
    case 'flag': return FLAG
    case 'date': return DATE
    case 'datetime': return DATETIME
    case 'date-with-time': return DATE_WITH_TIME
    case 'json': return JSON_CONTENT
  }
}

/**
 * What `rules` write for the hub's `value` after the field's name, or
 * undefined where they refuse it or answer no value (OMIT: the name is
 * written by then; the reference path leaves the field out).
 */
function written (
  rules: FieldRules,
  second: Buffer | undefined,
  value: unknown
): Buffer | undefined {
  try {
    const converted = rules.convert(value)
    if (converted === OMIT) return undefined
    const first = Buffer.from(JSON.stringify(converted))
    if (second === undefined || rules.second === undefined) return first
    const moment = rules.second(value)
    if (moment === OMIT) return first
    return Buffer.concat([first, second, Buffer.from(JSON.stringify(moment))])
  } catch {
    return undefined
  }
}

function compileField (
  f: FieldSpec,
  index: number,
  required: readonly string[],
  offset: string,
  compiling: Set<ResourceSpec>,
  tolerance: Tolerance | undefined
): Field {
  const key = Buffer.from(f.upstream)
  const requiredAt = required.indexOf(f.upstream)
  const inner = isResource(f.kind)
    ? f.kind
    : isArrayKind(f.kind) && f.kind.arrayOf !== 'json'
      ? f.kind.arrayOf
      : undefined
  const out = Buffer.from(`${JSON.stringify(f.name)}:`)
  const member = Buffer.concat([key, Buffer.from('":')])
  // A member shorter than a word (a one-byte key) has no words: memberIs leaves it to keyIs.
  const keyAt =
    member.length < 4
      ? []
      : Array.from({ length: Math.ceil(member.length / 4) }, (_, k) =>
        Math.min(k * 4, member.length - 4)
      )
  const names = namesOf(f)
  const second = names.length === 2 ? Buffer.from(`,${JSON.stringify(names[1])}:`) : undefined
  const rules = fieldRules(f, offset, tolerance, requiredAt !== -1)
  return {
    key,
    hash: hashOf(key, 0, key.length),
    keyAt: Int32Array.from(keyAt),
    keyWords: Int32Array.from(keyAt, (at) => member.readInt32LE(at)),
    out,
    outWords: wordsOf(out),
    commaWords: wordsOf(Buffer.concat([Buffer.from(','), out])),
    kind: kindOf(f),
    second,
    rules,
    nullOut:
      rules === undefined ? (isNull(f, null) ? NULL : undefined) : written(rules, second, null),
    emptyOut: isNull(f, '') && rules !== undefined ? written(rules, second, '') : undefined,
    record: inner === undefined ? undefined : compilePlan(inner, offset, compiling, tolerance),
    requiredBit: requiredAt === -1 ? 0 : 1 << requiredAt,
    index,
    next: undefined
  } as Field
}

/**
 * The plan of a resource; `offset` is the hub's UTC offset (`+07:00`), which
 * the date-time rules add; `tolerance` is where the rules note what they
 * read beyond the documented forms (the transcoder set's run).
 */
export function compilePlan (
  spec: ResourceSpec,
  offset: string,
  compiling = new Set<ResourceSpec>(),
  tolerance?: Tolerance
): Plan {
  // A spec inside itself would share one `seen` array between nested objects.
  if (compiling.has(spec)) throw new Error(`resource ${spec.id} contains itself`)
  compiling.add(spec)
  const required = spec.required ?? []
  if (required.length > 30) throw new Error(`resource ${spec.id}: more than 30 required fields`)
  const fields = spec.fields.map((f, index) =>
    compileField(f, index, required, offset, compiling, tolerance)
  )
  fields.forEach((field, i) => {
    ;(field as any).next = fields[i + 1]
  })
  for (const name of required) {
    if (!spec.fields.some((f) => f.upstream === name)) {
      throw new Error(`resource ${spec.id}: ` +
      `required field ${name} is not one of its fields`)
    }
  }
  const byHash = new Map<number, Field[]>()
  for (const field of fields) byHash.set(field.hash, [...(byHash.get(field.hash) ?? []), field])
  compiling.delete(spec)
  return {
    fields,
    byHash,
    requiredMask: required.reduce((mask, _, i) => mask | (1 << i), 0),
    names: new Set([...spec.fields.flatMap(namesOf), ...spellingsOf(spec, spec.fields).keys()]),
    order: { first: fields[0], next: fields.map((_, i) => fields[i + 1]) },
    seen: new Float64Array(fields.length).fill(-1)
  }
}
