// Stage `call-wrappers` (with retry.ts and credentials.ts): no span wrappers (tracing is off in the bench).
export function inCallSpan<T> (_op: unknown, _circuit: unknown, run: () => Promise<T>): Promise<T> {
  return run()
}

export function inAttemptSpan<T> (_op: unknown, _attempt: unknown, _template: unknown, run: () => Promise<T>): Promise<T> {
  return run()
}
