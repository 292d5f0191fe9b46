// The stages of an uncached lookup that `npm run bench -- --stages` measures:
// each by the built gateway's modules it replaces (under dist/) with a stub
// (bench/stages/stubs/), or by the steps of the hub client's call path it
// takes out or replaces (bench/stages/call-path.ts, through createHubClient's
// `callPath`): the same gateway, one stage removed or replaced by the least
// that keeps the request answering.
// Kept free of imports from src/ (register.ts reads it before the gateway loads).

export interface Stage {
  name: string
  /** What the stage is, for the report. */
  label: string
  /** What the stub does instead. */
  instead: string
  /** dist/ module (relative) -> stub file in bench/stages/stubs/. */
  replaces?: Record<string, string>
  /** Steps of the hub client's call path (by name) that call-path.ts takes out or replaces. */
  steps?: readonly string[]
}

/** The stub through which the call-path stages reach createHubClient's `callPath`. */
const CLIENT: Record<string, string> = { 'upstream/client.js': 'client.ts' }

export const STAGES: readonly Stage[] = [
  {
    name: 'client-key',
    label: "client key (the key's remembered client; SHA-256 on its first use)",
    instead: 'every request is the bench client, no hook',
    replaces: { 'plugins/clients.js': 'clients.ts' }
  },
  {
    name: 'scopes',
    label: 'scope check (onRequest, a callback hook)',
    instead: 'no hook',
    replaces: { 'plugins/auth.js': 'auth.ts' }
  },
  {
    name: 'rate-limit',
    label: 'rate limit (@fastify/rate-limit, memory store)',
    instead: 'no limiter',
    replaces: { 'plugins/rate-limit.js': 'rate-limit.ts' }
  },
  {
    name: 'validation',
    label: 'query validation (ajv, with coercion)',
    instead: 'every part valid as sent',
    replaces: { 'schemas/validators.js': 'validators.ts' }
  },
  {
    name: 'request-id-logger',
    label: 'request id (random UUID) and per-request child logger',
    instead: "a constant id, the server's logger itself",
    replaces: { 'app.js': 'app.ts' }
  },
  {
    name: 'hooks',
    label: 'shutdown hooks (onRequest + onSend, callback)',
    instead: 'no hooks',
    replaces: { 'plugins/lifecycle.js': 'lifecycle.ts' }
  },
  {
    name: 'load-shedding',
    label: 'load shedding (@fastify/under-pressure onRequest)',
    instead: 'not registered',
    replaces: { 'plugins/pressure.js': 'pressure.ts' }
  },
  {
    name: 'headers',
    label: 'security headers (helmet, precomputed) and cache headers',
    instead: 'neither set',
    replaces: {
      'plugins/hardening.js': 'hardening.ts',
      'routes/cache-headers.js': 'cache-headers.ts'
    }
  },
  {
    name: 'metrics',
    label:
      'metrics (prom-client: request counter and histogram in onResponse, hub call counter and ' +
      'histogram)',
    instead: 'no-op metrics, no hook',
    replaces: { 'plugins/metrics.js': 'metrics.ts' }
  },
  {
    name: 'breaker',
    label: 'circuit breaker (opossum, counts only)',
    instead: 'the call itself',
    steps: ['breaker']
  },
  {
    name: 'deadline',
    label:
      'deadline (its time, an AbortSignal only when something waits on it; ' +
      "the exchange's timer is the hub call's)",
    instead: 'one constant deadline and signal',
    steps: ['deadline']
  },
  {
    name: 'call-wrappers',
    label: 'retry, credentials and span steps (the layers around the call)',
    instead: 'the call itself, with the token the first call got',
    steps: ['retry', 'credentials', 'call-span', 'attempt-span']
  },
  {
    name: 'cache-policy',
    label: 'cache policy (key, coalescing, store of the answer, 64 MiB budget, sweep)',
    instead: "the hub call's answer, nothing kept",
    steps: ['cache']
  },
  {
    name: 'hub-call',
    label: "hub call (undici dispatch, the hub's socket, the body kept as it comes)",
    instead: 'the body from memory, as one chunk',
    steps: ['exchange']
  },
  {
    name: 'decode',
    label: 'decode (transcoder into the envelope)',
    instead: 'a copy of the answer decoded the first time',
    steps: ['decode']
  }
]

/**
 * Every stage's stubs at once: what is left is Fastify, routing, the route's handler and the reply.
 */
export const BARE = 'bare'
export const FULL = 'full'
/**
 * A second full gateway, measured like a stage: its "saving" is the method's own bias and noise,
 * which every row carries.
 */
export const CONTROL = 'control'

function stagesOf (variant: string): readonly Stage[] {
  if (variant === FULL || variant === CONTROL) return []
  if (variant === BARE) return STAGES
  const stage = STAGES.find(s => s.name === variant)
  if (stage === undefined) throw new Error(`unknown stage ${variant}`)
  return [stage]
}

/** The call-path steps a variant (`full`, `bare` or a stage's name) takes out or replaces. */
export function stepsOf (variant: string): string[] {
  return stagesOf(variant).flatMap(s => s.steps ?? [])
}

/** The dist/ replacements of a variant: its stages' stubs, and the client's when it has steps. */
export function replacementsOf (variant: string): Record<string, string> {
  const stages = stagesOf(variant)
  const client = stepsOf(variant).length > 0 ? CLIENT : {}
  return Object.assign({}, ...stages.map(s => s.replaces ?? {}), client) as Record<string, string>
}
