// The stages of an uncached lookup that `npm run bench -- --stages` measures,
// each by the built gateway's modules it replaces (under dist/) and the stub
// (bench/stages/stubs/) that replaces them: the same gateway, one stage
// removed or replaced by the least that keeps the request answering.
// Kept free of imports from src/ (register.ts reads it before the gateway loads).

export interface Stage {
  name: string
  /** What the stage is, for the report. */
  label: string
  /** What the stub does instead. */
  instead: string
  /** dist/ module (relative) -> stub file in bench/stages/stubs/. */
  replaces: Record<string, string>
}

export const STAGES: readonly Stage[] = [
  { name: 'client-key', label: 'client key (SHA-256 of the bearer key, registry lookup)', instead: 'every request is the bench client, no hook', replaces: { 'plugins/clients.js': 'clients.ts' } },
  { name: 'scopes', label: 'scope check (onRequest, a callback hook)', instead: 'no hook', replaces: { 'plugins/auth.js': 'auth.ts' } },
  { name: 'rate-limit', label: 'rate limit (@fastify/rate-limit, memory store)', instead: 'no limiter', replaces: { 'plugins/rate-limit.js': 'rate-limit.ts' } },
  { name: 'validation', label: 'query validation (ajv, with coercion)', instead: 'every part valid as sent', replaces: { 'schemas/validators.js': 'validators.ts' } },
  { name: 'request-id-logger', label: 'request id (random UUID) and per-request child logger', instead: 'a constant id, the server\'s logger itself', replaces: { 'app.js': 'app.ts' } },
  { name: 'hooks', label: 'shutdown hooks (onRequest + onSend, callback)', instead: 'no hooks', replaces: { 'plugins/lifecycle.js': 'lifecycle.ts' } },
  { name: 'load-shedding', label: 'load shedding (@fastify/under-pressure onRequest)', instead: 'not registered', replaces: { 'plugins/pressure.js': 'pressure.ts' } },
  { name: 'headers', label: 'security headers (helmet, precomputed) and cache headers', instead: 'neither set', replaces: { 'plugins/hardening.js': 'hardening.ts', 'routes/cache-headers.js': 'cache-headers.ts' } },
  { name: 'metrics', label: 'metrics (prom-client: request counter and histogram in onResponse, hub call counter and histogram)', instead: 'no-op metrics, no hook', replaces: { 'plugins/metrics.js': 'metrics.ts' } },
  { name: 'breaker', label: 'circuit breaker (opossum, counts only)', instead: 'the call itself', replaces: { 'upstream/policies/breaker.js': 'breaker.ts' } },
  { name: 'deadline', label: 'deadline (its time, an AbortSignal only when something waits on it; the exchange\'s timer is the hub call\'s)', instead: 'a constant deadline and signal', replaces: { 'upstream/policies/deadline.js': 'deadline.ts' } },
  { name: 'call-wrappers', label: 'retry, credentials and span wrappers (the layers around the call)', instead: 'the call itself', replaces: { 'upstream/policies/retry.js': 'retry.ts', 'upstream/policies/credentials.js': 'credentials.ts', 'upstream/spans.js': 'spans.ts' } },
  { name: 'cache-policy', label: 'cache policy (key, coalescing, store of the answer, 64 MiB budget, sweep)', instead: 'the hub call\'s answer, nothing kept', replaces: { 'upstream/policies/cache.js': 'cache.ts' } },
  { name: 'hub-call', label: 'hub call (undici dispatch, the hub\'s socket, the body kept as it comes)', instead: 'the body from memory, as one chunk', replaces: { 'upstream/transport.js': 'transport.ts' } },
  { name: 'decode', label: 'decode (transcoder into the envelope)', instead: 'a copy of the answer decoded the first time', replaces: { 'upstream/decode.js': 'decode.ts' } }
]

/** Every stage's stubs at once: what is left is Fastify, routing, the route's handler and the reply. */
export const BARE = 'bare'
export const FULL = 'full'
/** A second full gateway, measured like a stage: its "saving" is the method's own bias and noise, which every row carries. */
export const CONTROL = 'control'

/** The dist/ replacements of a variant (`full`, `bare` or a stage's name). */
export function replacementsOf (variant: string): Record<string, string> {
  if (variant === FULL || variant === CONTROL) return {}
  if (variant === BARE) return Object.assign({}, ...STAGES.map(s => s.replaces)) as Record<string, string>
  const stage = STAGES.find(s => s.name === variant)
  if (stage === undefined) throw new Error(`unknown stage ${variant}`)
  return stage.replaces
}
