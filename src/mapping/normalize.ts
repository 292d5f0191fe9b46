import {
  camelCaseDeep,
  cachedCamelCase,
  fieldRules,
  orNull,
  spellingsOf,
  type Convert
} from './fields.ts'
import {
  HUB_EXTRA,
  isArrayKind,
  isResource,
  namesOf,
  type FieldSpec,
  type ResourceSpec
} from '../catalogue/resource-spec.ts'
import { documentedTolerance, OMIT, type Tolerance } from './drift.ts'
import { located, ShapeError } from './shape-error.ts'

/** Normalizes one record; a ShapeError's path starts at `root` when given. */
export type Normalizer = (value: unknown, root?: string) => Record<string, unknown>

interface Options {
  /** UTC offset of upstream local times, e.g. `+07:00`. */
  offset: string
  /**
   * What is read beyond the documented forms, and where it is noted (default: the documented hub).
   */
  tolerance?: Tolerance
}

interface CompiledField {
  upstream: string
  name: string
  convert: Convert
  /** A date-with-time field's date-time, under `secondName`. */
  second: Convert | undefined
  secondName: string
}

/** `required`: the record's spec requires the field (fields.ts fieldRules). */
function compileField (field: FieldSpec, options: Options, required: boolean): CompiledField {
  const { kind } = field
  const compiled = {
    upstream: field.upstream,
    name: field.name,
    second: undefined,
    secondName: namesOf(field)[1] ?? ''
  }
  const tolerance = options.tolerance ?? documentedTolerance()
  const rules = fieldRules(field, options.offset, tolerance, required)
  if (rules !== undefined) return { ...compiled, ...rules }
  if (isResource(kind)) {
    return { ...compiled, convert: orNull(field, compileRecord(kind, options), tolerance) }
  }
  if (!isArrayKind(kind)) throw new Error(`field ${field.upstream}: unknown kind ${String(kind)}`)
  const item: Convert =
    kind.arrayOf === 'json' ? (v) => camelCaseDeep(v) : compileRecord(kind.arrayOf, options)
  return {
    ...compiled,
    convert: orNull(field, (v) => {
      if (!Array.isArray(v)) throw new ShapeError('', 'an array')
      const out = new Array(v.length)
      for (let i = 0; i < v.length; i++) {
        try {
          out[i] = item(v[i])
        } catch (error) {
          throw located(error, `[${i}]`)
        }
      }
      return out
    }, tolerance)
  }
}

/**
 * Compiles a spec into one function, once per resource and configuration:
 * the per-request work is a loop over a precomputed field list, with no
 * regular expression or generic walk for the fields the spec names, and no
 * string built unless a value fails (then the error's path is assembled on
 * the way out). Each value is converted by its field's rule (fields.ts).
 */
function compileRecord (
  spec: ResourceSpec,
  options: Options
): (value: unknown) => Record<string, unknown> {
  const required = spec.required ?? []
  const identity = new Set(required)
  const fields = spec.fields.map((f) => compileField(f, options, identity.has(f.upstream)))
  const count = fields.length
  const known = new Set(spec.fields.map((f) => f.upstream))
  const aliases = spellingsOf(spec, fields)
  /** The value of a required field under another spelling, on the failure path only. */
  const aliasedValue = (upstream: string, src: Record<string, unknown>): unknown => {
    for (const key in src) {
      if (!known.has(key) && aliases.get(cachedCamelCase(key))?.upstream === upstream) {
        return src[key]
      }
    }
    return undefined
  }
  return function normalize (value: unknown): Record<string, unknown> {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new ShapeError('', 'an ' +
      'object')
    }
    const src = value as Record<string, unknown>
    for (let i = 0; i < required.length; i++) {
      if (src[required[i]!] === undefined && aliasedValue(required[i]!, src) === undefined) {
        throw new ShapeError(required[i]!, 'a ' +
        'value')
      }
    }
    const out: Record<string, unknown> = {}
    for (let i = 0; i < count; i++) {
      const field = fields[i]!
      const v = src[field.upstream]
      if (v === undefined) continue
      try {
        const value = field.convert(v)
        // OMIT: no value (a null string on a field that may not be null): left out, as if not sent;
        // the record's identity cannot be.
        if (value !== OMIT) out[field.name] = value
        else if (identity.has(field.upstream)) throw new ShapeError('', 'a value')
        if (field.second !== undefined) {
          const second = field.second(v)
          if (second !== OMIT) out[field.secondName] = second
        }
      } catch (error) {
        throw located(error, field.upstream)
      }
    }
    let extra: Record<string, unknown> | undefined
    for (const key in src) {
      if (known.has(key)) continue
      const name = cachedCamelCase(key)
      const field = aliases.get(name)
      // Unknown fields are kept, camelCased, apart from ours: under `hubExtra`, so that our names
      // stay a closed set (docs/api.md#the-dialect).
      if (field === undefined) {
        ;(extra ??= {})[name] = camelCaseDeep(src[key])
        continue
      }
      // A field the spec maps, in another spelling: the field, under our name; dropped where the
      // field is already answered.
      if (src[field.upstream] !== undefined || Object.hasOwn(out, field.name)) continue
      try {
        const value = field.convert(src[key])
        if (value !== OMIT) out[field.name] = value
        else if (identity.has(field.upstream)) throw new ShapeError('', 'a value')
        if (field.second !== undefined) {
          const second = field.second(src[key])
          if (second !== OMIT) out[field.secondName] = second
        }
      } catch (error) {
        throw located(error, key)
      }
    }
    if (extra !== undefined) out[HUB_EXTRA] = extra
    return out
  }
}

/** The normalizer of a resource; a failure's path starts at `root` (the spec id by default). */
export function compileNormalizer (spec: ResourceSpec, options: Options): Normalizer {
  const normalize = compileRecord(spec, options)
  return function (value: unknown, root: string = spec.id): Record<string, unknown> {
    try {
      return normalize(value)
    } catch (error) {
      throw located(error, root)
    }
  }
}
