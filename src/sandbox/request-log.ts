import type { SandboxRequestLog } from './types.ts'

/**
 * One request on one line, for someone watching or counting the hub calls
 * of a standalone sandbox: `2024-03-01T08:15:00.000Z GET /HUB/noblbc20
 * operation=noblbc20 fault=none status=200`, with `delay=…ms` when the
 * answer waited.
 */
export function requestLogLine (entry: SandboxRequestLog, at: Date = new Date()): string {
  const delay = entry.delayMs > 0 ? ` delay=${entry.delayMs}ms` : ''
  return `${at.toISOString()} ${entry.method} ${entry.path} operation=${entry.operation} ` +
    `fault=${entry.fault ?? 'none'} status=${entry.status}${delay}`
}
