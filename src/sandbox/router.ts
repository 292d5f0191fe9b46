import type { Operation } from './operations.ts'

export interface RouteMatch {
  operation: Operation
  /** Percent-decoded segments after the operation's address: parameter values in table order. */
  segments: string[]
}

function prefixes (operation: Operation, segment: string): string[][] {
  return operation.area === 'lookup'
    ? [['V1', segment, 'INT', 'AUTH']]
    : [[`${segment}-DEV`], ['V3', segment]]
}

/** Splits a raw path on '/' before decoding, so an encoded %2F stays inside its segment. */
export function decodeSegments (rawPath: string): string[] | undefined {
  if (!rawPath.startsWith('/')) return undefined
  let path = rawPath.slice(1)
  if (path.endsWith('/')) path = path.slice(0, -1) // the trailing slash is optional
  try {
    return path.split('/').map((part) => decodeURIComponent(part))
  } catch {
    return undefined
  }
}

/**
 * Finds the operation whose address starts the path. Segments beyond the
 * address are parameter values, at most one per path-placeable parameter;
 * the longest matching address wins (DetilBooking/isBooked over DetilBooking).
 */
export function matchRoute (
  rawPath: string,
  segment: string,
  operations: readonly Operation[]
): RouteMatch | undefined {
  const parts = decodeSegments(rawPath)
  if (parts === undefined) return undefined
  let best: (RouteMatch & { length: number }) | undefined
  for (const operation of operations) {
    const placeable = operation.params.filter((p) => p.inPath).length
    for (const prefix of prefixes(operation, segment)) {
      const fixed = [...prefix, ...operation.path]
      if (parts.length < fixed.length || fixed.some((part, i) => parts[i] !== part)) continue
      const rest = parts.slice(fixed.length)
      if (rest.length > placeable) continue
      if (best === undefined || fixed.length > best.length) {
        best = { operation, segments: rest, length: fixed.length }
      }
    }
  }
  return best === undefined ? undefined : { operation: best.operation, segments: best.segments }
}
