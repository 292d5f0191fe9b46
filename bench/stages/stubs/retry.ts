// Stage `call-wrappers` (with credentials.ts and spans.ts): one attempt, no retry loop.
export function withRetries<T> (_policy: unknown, _op: unknown, _deadline: unknown, _log: unknown, send: (attempt: number) => Promise<T>): Promise<T> {
  return send(1)
}
