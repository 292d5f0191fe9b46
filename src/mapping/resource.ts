/**
 * A resource spec describes one upstream record: for each upstream field, our
 * name, its kind and its meaning. From one spec come the TypeBox response
 * schema (schemas.ts), the compiled normalizer (normalize.ts) and the
 * published glossary (glossary.ts).
 */
export type ScalarKind =
  | 'string' // a string
  | 'text' // a string, or a number passed on as a string (fields whose type interface.md leaves open)
  | 'integer'
  | 'number'
  | 'flag' // 0/1 upstream, boolean here
  | 'date' // YYYY-MM-DD here
  | 'datetime' // ISO 8601 with the configured offset here
  | 'json' // element content interface.md does not show: passed on, keys camelCased

export interface FieldSpec {
  upstream: string
  name: string
  kind: ScalarKind | ResourceSpec | { arrayOf: ResourceSpec | 'json' }
  nullable?: boolean
  /** Upstream empty string is answered as null (interface.md 2.6: gate_pass). */
  emptyAsNull?: boolean
  description: string
  format?: 'uuid' | 'uri'
}

export interface ResourceSpec {
  /** Name of the shared schema in OpenAPI `components.schemas`. */
  id: string
  title: string
  /** Where interface.md defines it. */
  source: string
  fields: FieldSpec[]
  /**
   * Upstream fields without which a record is not the documented shape
   * (UPSTREAM_BAD_RESPONSE): the record's identity. Everything else may be absent.
   */
  required?: string[]
}

export function isResource (kind: FieldSpec['kind']): kind is ResourceSpec {
  return typeof kind === 'object' && 'fields' in kind
}

export function isArrayKind (kind: FieldSpec['kind']): kind is { arrayOf: ResourceSpec | 'json' } {
  return typeof kind === 'object' && 'arrayOf' in kind
}

/** Generic camelCase for upstream keys the specs do not name (`Data BL BC 2.0` -> `dataBlBc20`). */
export function camelCase (key: string): string {
  const words = key.split(/[^A-Za-z0-9]+/).filter(Boolean)
  let out = ''
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string
    const lowered = word === word.toUpperCase() ? word.toLowerCase() : word
    out += i === 0
      ? lowered.charAt(0).toLowerCase() + lowered.slice(1)
      : lowered.charAt(0).toUpperCase() + lowered.slice(1)
  }
  return out === '' ? key : out
}
