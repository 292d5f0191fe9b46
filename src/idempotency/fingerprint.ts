import { createHash } from 'node:crypto'

/** JSON with object keys sorted at every depth, so that key order never makes two bodies differ. */
export function canonicalJson (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(item => canonicalJson(item ?? null)).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>
    const keys = Object.keys(record).filter(key => record[key] !== undefined).sort()
    return `{${keys.map(key => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(',')}}`
  }
  return JSON.stringify(value ?? null)
}

/** What makes two writes "the same request": the path parameters and the (validated) body. */
export function requestFingerprint (params: unknown, body: unknown): string {
  return createHash('sha256').update(canonicalJson({ params: params ?? {}, body: body ?? null })).digest('hex')
}
