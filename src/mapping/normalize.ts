import { toIsoDate, toIsoDateTime } from '../domain/dates.ts'
import { camelCase, isArrayKind, isResource, type FieldSpec, type ResourceSpec, type ScalarKind } from './resource.ts'

/** The hub answered a value that does not fit interface.md; `path` names it. */
export class ShapeError extends Error {
  readonly path: string
  constructor (path: string, expected: string) {
    super(`${path}: expected ${expected}`)
    this.name = 'ShapeError'
    this.path = path
  }
}

export type Normalizer = (value: unknown, path?: string) => Record<string, unknown>

interface Options {
  /** UTC offset of upstream local times, e.g. `+07:00`. */
  offset: string
}

type Convert = (value: unknown, path: string) => unknown

const KEY_CACHE_LIMIT = 10_000
const keyCache = new Map<string, string>()

/** camelCase for unknown keys, memoized: the same few keys recur in every item. */
function cachedCamelCase (key: string): string {
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
      return (v, path) => {
        if (typeof v === 'string') return v
        if (typeof v === 'number') return String(v)
        throw new ShapeError(path, 'a string')
      }
    case 'text':
      return (v, path) => {
        if (typeof v === 'string' || typeof v === 'number') return String(v)
        throw new ShapeError(path, 'a string')
      }
    case 'integer':
    case 'number':
      return (v, path) => {
        const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v
        if (typeof n === 'number' && Number.isFinite(n) && (kind === 'number' || Number.isInteger(n))) return n
        throw new ShapeError(path, `a${kind === 'integer' ? 'n integer' : ' number'}`)
      }
    case 'flag':
      return (v, path) => {
        if (v === 1 || v === '1' || v === true) return true
        if (v === 0 || v === '0' || v === false) return false
        throw new ShapeError(path, 'a 0/1 flag')
      }
    case 'date':
      return (v, path) => {
        if (typeof v === 'string') return toIsoDate(v)
        throw new ShapeError(path, 'a date string')
      }
    case 'datetime':
      return (v, path) => {
        if (typeof v === 'string') return toIsoDateTime(v, offset)
        throw new ShapeError(path, 'a date-time string')
      }
    case 'json':
      return v => camelCaseDeep(v)
  }
}

function converter (field: FieldSpec, options: Options): Convert {
  const { kind } = field
  let convert: Convert
  if (isResource(kind)) {
    convert = compileNormalizer(kind, options) as Convert
  } else if (isArrayKind(kind)) {
    const item: Convert = kind.arrayOf === 'json' ? v => camelCaseDeep(v) : compileNormalizer(kind.arrayOf, options) as Convert
    convert = (v, path) => {
      if (!Array.isArray(v)) throw new ShapeError(path, 'an array')
      const out = new Array(v.length)
      for (let i = 0; i < v.length; i++) out[i] = item(v[i], `${path}[${i}]`)
      return out
    }
  } else {
    convert = scalar(kind, options.offset)
  }
  if (field.nullable === true) {
    const inner = convert
    const emptyAsNull = field.emptyAsNull === true
    convert = (v, path) => v === null || (emptyAsNull && v === '') ? null : inner(v, path)
  }
  return convert
}

/**
 * Compiles a spec into one function, once per resource and configuration:
 * the per-request work is a loop over a precomputed field list, with no
 * regular expression or generic walk for the fields the spec names.
 */
export function compileNormalizer (spec: ResourceSpec, options: Options): Normalizer {
  const fields = spec.fields.map(field => ({
    upstream: field.upstream,
    name: field.name,
    convert: converter(field, options)
  }))
  const known = new Set(spec.fields.map(f => f.upstream))
  const required = spec.required ?? []
  const title = spec.id
  return function normalize (value: unknown, path = title): Record<string, unknown> {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new ShapeError(path, 'an object')
    const src = value as Record<string, unknown>
    for (let i = 0; i < required.length; i++) {
      if (src[required[i]!] === undefined) throw new ShapeError(`${path}.${required[i]}`, 'a value')
    }
    const out: Record<string, unknown> = {}
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i]!
      const v = src[field.upstream]
      if (v !== undefined) out[field.name] = field.convert(v, `${path}.${field.upstream}`)
    }
    for (const key in src) {
      if (!known.has(key)) out[cachedCamelCase(key)] = camelCaseDeep(src[key])
    }
    return out
  }
}
