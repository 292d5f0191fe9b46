/**
 * Every value the stores write is a JSON object with its format version in
 * `v`, so that a replica can tell a value of another version (written by an
 * older or newer gateway during a rolling deploy) and skip or refuse it.
 */

/** The object `text` holds when it is one of format `version`; undefined for anything else. */
export function parseVersioned (
  text: string,
  version: number
): Record<string, unknown> | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
  const record = value as Record<string, unknown>
  return record.v === version ? record : undefined
}
