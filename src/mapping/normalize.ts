import { toIsoDate, toIsoDateTime } from '../domain/dates.ts'
import { camelCase, isArrayKind, isResource, namesOf, type FieldSpec, type ResourceSpec, type ScalarKind } from './resource-spec.ts'

/** The hub answered a value that does not fit interface.md; `path` names it. */
export class ShapeError extends Error {
  path: string
  readonly expected: string
  constructor (path: string, expected: string) {
    super(`${path}: expected ${expected}`)
    this.name = 'ShapeError'
    this.path = path
    this.expected = expected
  }

  /** The path is built on the way out of a failure, never on the way in of a success. */
  within (prefix: string): ShapeError {
    this.path = this.path === '' ? prefix : this.path.startsWith('[') ? `${prefix}${this.path}` : `${prefix}.${this.path}`
    this.message = `${this.path}: expected ${this.expected}`
    return this
  }
}

function located (error: unknown, prefix: string): unknown {
  return error instanceof ShapeError ? error.within(prefix) : error
}

/** Normalizes one record; a ShapeError's path starts at `root` when given. */
export type Normalizer = (value: unknown, root?: string) => Record<string, unknown>

interface Options {
  /** UTC offset of upstream local times, e.g. `+07:00`. */
  offset: string
}

type Convert = (value: unknown) => unknown

const KEY_CACHE_LIMIT = 10_000
const keyCache = new Map<string, string>()

/** camelCase for unknown keys, memoized: the same few keys recur in every item. */
export function cachedCamelCase (key: string): string {
  let out = keyCache.get(key)
  if (out === undefined) {
    out = camelCase(key)
    if (keyCache.size < KEY_CACHE_LIMIT) keyCache.set(key, out)
  }
  return out
}

/** Unknown content: kept, with keys camelCased all the way down. */
export function camelCaseDeep (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelCaseDeep)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const key in value) out[cachedCamelCase(key)] = camelCaseDeep((value as Record<string, unknown>)[key])
    return out
  }
  return value
}

function scalar (kind: ScalarKind, offset: string): Convert {
  switch (kind) {
    case 'string':
      return (v) => {
        if (typeof v === 'string') return v
        if (typeof v === 'number') return String(v)
        throw new ShapeError('', 'a string')
      }
    case 'text':
      return (v) => {
        if (typeof v === 'string' || typeof v === 'number') return String(v)
        throw new ShapeError('', 'a string')
      }
    case 'integer':
    case 'number':
      return (v) => {
        const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v
        if (typeof n === 'number' && Number.isFinite(n) && (kind === 'number' || Number.isInteger(n))) return n
        throw new ShapeError('', `a${kind === 'integer' ? 'n integer' : ' number'}`)
      }
    case 'flag':
      return (v) => {
        if (v === 1 || v === '1' || v === true) return true
        if (v === 0 || v === '0' || v === false) return false
        throw new ShapeError('', 'a 0/1 flag')
      }
    case 'date':
    case 'date-with-time':
      return (v) => {
        if (typeof v === 'string') return toIsoDate(v)
        throw new ShapeError('', kind === 'date' ? 'a date string' : 'a date-time string')
      }
    case 'datetime':
      return (v) => {
        if (typeof v === 'string') return toIsoDateTime(v, offset)
        throw new ShapeError('', 'a date-time string')
      }
    case 'json':
      return v => camelCaseDeep(v)
  }
}

/** A field's value under its second name (`date-with-time`: the date-time), or undefined. */
function secondConverter (field: FieldSpec, options: Options): Convert | undefined {
  if (field.kind !== 'date-with-time') return undefined
  return nullable(field, scalar('datetime', options.offset))
}

function nullable (field: FieldSpec, convert: Convert): Convert {
  if (field.nullable !== true) return convert
  const emptyAsNull = field.emptyAsNull === true
  return (v) => v === null || (emptyAsNull && v === '') ? null : convert(v)
}

function converter (field: FieldSpec, options: Options): Convert {
  const { kind } = field
  let convert: Convert
  if (isResource(kind)) {
    convert = compileRecord(kind, options)
  } else if (isArrayKind(kind)) {
    const item: Convert = kind.arrayOf === 'json' ? v => camelCaseDeep(v) : compileRecord(kind.arrayOf, options)
    convert = (v) => {
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
    }
  } else {
    convert = scalar(kind, options.offset)
  }
  return nullable(field, convert)
}

/**
 * Compiles a spec into one function, once per resource and configuration:
 * the per-request work is a loop over a precomputed field list, with no
 * regular expression or generic walk for the fields the spec names, and no
 * string built unless a value fails (then the error's path is assembled on
 * the way out).
 */
function compileRecord (spec: ResourceSpec, options: Options): (value: unknown) => Record<string, unknown> {
  const fields = spec.fields.map(field => ({
    upstream: field.upstream,
    name: field.name,
    convert: converter(field, options),
    second: secondConverter(field, options),
    secondName: namesOf(field)[1] ?? ''
  }))
  const count = fields.length
  const known = new Set(spec.fields.map(f => f.upstream))
  const required = spec.required ?? []
  return function normalize (value: unknown): Record<string, unknown> {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ShapeError('', 'an object')
    const src = value as Record<string, unknown>
    for (let i = 0; i < required.length; i++) {
      if (src[required[i]!] === undefined) throw new ShapeError(required[i]!, 'a value')
    }
    const out: Record<string, unknown> = {}
    for (let i = 0; i < count; i++) {
      const field = fields[i]!
      const v = src[field.upstream]
      if (v === undefined) continue
      try {
        out[field.name] = field.convert(v)
        if (field.second !== undefined) out[field.secondName] = field.second(v)
      } catch (error) {
        throw located(error, field.upstream)
      }
    }
    // Unknown fields are kept, camelCased (contract.md 1).
    for (const key in src) {
      if (!known.has(key)) out[cachedCamelCase(key)] = camelCaseDeep(src[key])
    }
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
