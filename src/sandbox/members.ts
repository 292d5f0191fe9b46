// Dotted member paths (`item.access_token`, `error.detail`), as a hub
// profile names the members of an answer; a whole number names a list's
// item (`errors.0.detail`: a list of errors, as many APIs answer them).

const INDEX = /^(0|[1-9]\d*)$/

/** Sets the member at a dotted path, making the objects and lists on the way. */
export function setMember (target: Record<string, unknown>, path: string, value: unknown): void {
  const names = path.split('.')
  const last = names.pop() ?? path
  let at: object = target
  for (const [i, name] of names.entries()) {
    const inner = names[i + 1] ?? last
    const next: unknown = Reflect.get(at, name)
    const isHolder = typeof next === 'object' && next !== null
    if (isHolder && (!Array.isArray(next) || INDEX.test(inner))) at = next
    else {
      const fresh = INDEX.test(inner) ? [] : {}
      Reflect.set(at, name, fresh)
      at = fresh
    }
  }
  Reflect.set(at, last, value)
}

/** An object holding each value at its dotted path, in order. */
export function withMembers (
  entries: ReadonlyArray<readonly [string, unknown]>
): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [path, value] of entries) setMember(out, path, value)
  return out
}
