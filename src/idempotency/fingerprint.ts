import { createHash } from 'node:crypto'

type Work = { text: string } | { value: unknown }

/**
 * JSON with object keys sorted at every depth, so that key order never makes
 * two bodies differ. Written with its own stack rather than by recursion: a
 * body nested thousands deep (routes refuse them, see plugins/body-depth.ts,
 * but this must not depend on it) would overflow the call stack.
 */
export function canonicalJson (root: unknown): string {
  let out = ''
  const work: Work[] = [{ value: root }]
  for (let item = work.pop(); item !== undefined; item = work.pop()) {
    if ('text' in item) {
      out += item.text
      continue
    }
    const { value } = item
    if (Array.isArray(value)) {
      work.push({ text: ']' })
      for (let i = value.length - 1; i >= 0; i--) {
        work.push({ value: value[i] ?? null })
        if (i > 0) work.push({ text: ',' })
      }
      work.push({ text: '[' })
    } else if (value !== null && typeof value === 'object') {
      const record = value as Record<string, unknown>
      const keys = Object.keys(record).filter(key => record[key] !== undefined).sort()
      work.push({ text: '}' })
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i] as string
        work.push({ value: record[key] })
        work.push({ text: `${i > 0 ? ',' : ''}${JSON.stringify(key)}:` })
      }
      work.push({ text: '{' })
    } else {
      out += JSON.stringify(value ?? null)
    }
  }
  return out
}

/** What makes two writes "the same request": the path parameters and the (validated) body. */
export function requestFingerprint (params: unknown, body: unknown): string {
  return createHash('sha256')
    .update(canonicalJson({ params: params ?? {}, body: body ?? null }))
    .digest('hex')
}
