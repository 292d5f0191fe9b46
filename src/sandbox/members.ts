// Dotted member paths (`item.access_token`, `error.detail`), as a hub
// profile names the members of an answer.

/** Sets the member at a dotted path, making the objects on the way. */
export function setMember (target: Record<string, unknown>, path: string, value: unknown): void {
  const names = path.split('.')
  const last = names.pop() ?? path
  let at = target
  for (const name of names) {
    const next = at[name]
    if (typeof next === 'object' && next !== null && !Array.isArray(next)) at = next as Record<string, unknown>
    else {
      const made: Record<string, unknown> = {}
      at[name] = made
      at = made
    }
  }
  at[last] = value
}

/** An object holding each value at its dotted path, in order. */
export function withMembers (entries: ReadonlyArray<readonly [string, unknown]>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [path, value] of entries) setMember(out, path, value)
  return out
}
