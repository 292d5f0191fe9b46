import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.ts'
import type { Clock } from '../../src/clock.ts'
import { hashClientKey } from '../../src/auth/keys.ts'
import type { Scope } from '../../src/catalogue/scopes.ts'
import { ConfigError, loadConfig } from '../../src/config/load.ts'
import { resolveConfig, type GatewayConfig } from '../../src/config/resolve.ts'
import { checkedProfile, profileProblems } from '../../src/profile/load.ts'
import type { HubProfile } from '../../src/profile/schema.ts'
import {
  SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_PLATFORM_ID, sandboxEnv, sandboxProfile,
  startSandbox, type Sandbox, type SandboxOptions
} from '../../src/sandbox/index.ts'
import type { IdempotencyClaim, IdempotencyStore } from '../../src/state/types.ts'

export { SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_PLATFORM_ID }

/** The settings that keep a test to one hub call per request: no cache, no load shedding. */
export const RESILIENCE_OFF: Record<string, string> = {
  CACHE_TTL_SECONDS: '0',
  CACHE_STALE_IF_ERROR_SECONDS: '0',
  CACHE_FAILURE_SECONDS: '0',
  PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0'
}

/** A part of a hub profile, merged member by member over a whole one (mergeProfile). */
export type ProfilePatch = { [member: string]: unknown }

/** The hub profile members that keep a test to one hub call per request: no retries, no breaker. */
export const RESILIENCE_OFF_PROFILE: ProfilePatch = {
  retries: { count: 0 },
  breaker: { volumeThreshold: 1_000_000 }
}

function isObject (value: unknown): value is ProfilePatch {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** `base` with each patch over it: objects merged member by member, other values replaced. */
export function mergeProfile (
  base: object,
  ...patches: ReadonlyArray<ProfilePatch | undefined>
): ProfilePatch {
  const merge = (into: ProfilePatch, patch: ProfilePatch): ProfilePatch => {
    const out: ProfilePatch = { ...into }
    for (const [key, value] of Object.entries(patch)) {
      const before = out[key]
      out[key] = isObject(before) && isObject(value) ? merge(before, value) : value
    }
    return out
  }
  let merged: ProfilePatch = { ...base }
  for (const patch of patches) if (patch !== undefined) merged = merge(merged, patch)
  return merged
}

/** A sandbox's profile (sandboxProfile) with RESILIENCE_OFF_PROFILE and `patch` over it. */
export function testProfile (sandbox: SandboxOptions = {}, patch?: ProfilePatch): HubProfile {
  const merged = mergeProfile(sandboxProfile(sandbox), RESILIENCE_OFF_PROFILE, patch)
  return checkedProfile(merged, 'the test\'s profile')
}

/** A temporary file holding this profile as JSON, named `name`, removed in teardown. */
export function writeProfileFile (t: TestLike, profile: object, name = 'hub-profile.json'): string {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-profile-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, name)
  writeFileSync(file, JSON.stringify(profile))
  return file
}

/** The subset of a tap `Test` the helpers use. */
interface TestLike { teardown (fn: () => unknown): void }

export interface Built {
  app: FastifyInstance
  sandbox: Sandbox
  config: GatewayConfig
  /** Every log line the app wrote, parsed. */
  logs: Array<Record<string, unknown>>
  /** Every log line the app wrote, raw. */
  rawLogs: string[]
}

export interface BuildOptions {
  /** Environment variables, as the gateway would read them; a function gets the started sandbox. */
  env?: Record<string, string> | ((sandbox: Sandbox) => Record<string, string>)
  sandbox?: SandboxOptions
  /** Clients to authenticate: written to a temporary CLIENTS_FILE (authentication on). */
  clients?: TestClient[]
  /** Whether the gateway is told it fronts the built-in sandbox (default true: it does). */
  sandboxMode?: boolean
  /** The captured logger's level (default debug). */
  logLevel?: string
  /** The gateway's clock (TTLs, windows, renewals); see manualClock. */
  clock?: Clock
  /**
   * Hub profile members for this gateway, over its profile: the file
   * UPSTREAM_PROFILE_FILE names (then written to a temporary file of the
   * same name), or the sandbox's. RESILIENCE_OFF_PROFILE goes under them.
   */
  profile?: ProfilePatch
}

/** A client of the test's CLIENTS_FILE, with its key in clear. */
export interface TestClient {
  name: string
  key: string
  scopes: Scope[]
  rateLimit?: { max?: number, timeWindow?: string }
  events?: 'own' | 'all'
}

/** A temporary file holding this text, removed in teardown (a CLIENTS_FILE as written by hand). */
export function writeTempFile (t: TestLike, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-clients-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'clients.json')
  writeFileSync(file, text)
  return file
}

/** A temporary CLIENTS_FILE holding these clients, by key hash. */
export function writeClientsFile (t: TestLike, clients: readonly TestClient[]): string {
  return writeTempFile(
    t,
    JSON.stringify(
      clients.map(({ name, key, scopes, rateLimit, events }) => ({
        name,
        keySha256: hashClientKey(key),
        scopes,
        ...(rateLimit === undefined ? {} : { rateLimit }),
        ...(events === undefined ? {} : { events })
      }))
    )
  )
}

/**
 * Builds the gateway in front of a real sandbox on a random loopback port and
 * closes both in teardown. Logs are captured at debug level.
 */
export async function build (t: TestLike, options: BuildOptions = {}): Promise<Built> {
  const sandbox = await startSandbox({ ...options.sandbox })
  const env: Record<string, string> = {
    ...sandboxEnv(sandbox.url),
    LOG_LEVEL: 'debug',
    // One hub call per request, as in v1: tests of caching, retries, the breaker
    // and load shedding (test/resilience-*.test.ts) turn them on explicitly.
    ...RESILIENCE_OFF,
    ...(options.clients === undefined
      ? {}
      : { CLIENTS_FILE: writeClientsFile(t, options.clients) }),
    ...(typeof options.env === 'function' ? options.env(sandbox) : options.env)
  }
  const { profile, file } = profileFor(t, env.UPSTREAM_PROFILE_FILE, options)
  const config = resolveConfig(file === undefined ? env : { ...env, UPSTREAM_PROFILE_FILE: file })
  const rawLogs: string[] = []
  const logs: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue
        rawLogs.push(line)
        logs.push(JSON.parse(line) as Record<string, unknown>)
      }
      callback()
    }
  })
  let app: FastifyInstance
  try {
    app = await buildApp({
      config,
      sandbox: options.sandboxMode ?? true,
      ...(profile === undefined ? {} : { profile }),
      ...(options.clock === undefined ? {} : { clock: options.clock })
    }, { level: options.logLevel ?? 'debug', stream })
  } catch (error) {
    // An app that refuses to start (a configuration problem only it sees) leaves no sandbox behind.
    await sandbox.close()
    throw error
  }
  t.teardown(async () => {
    await app.close()
    await sandbox.close()
  })
  return { app, sandbox, config, logs, rawLogs }
}

/**
 * The gateway's hub profile in a test: without UPSTREAM_PROFILE_FILE, the
 * sandbox's (given to the app); with it, that file with the test's members
 * over it, written to a temporary file of the same name (a file with
 * problems is left as it is, for the tests of its problems).
 */
function profileFor (
  t: TestLike,
  given: string | undefined,
  options: BuildOptions
): { profile?: HubProfile, file?: string } {
  if (given === undefined || given.trim() === '') {
    return { profile: testProfile(options.sandbox, options.profile) }
  }
  let base: unknown
  try {
    base = JSON.parse(readFileSync(given, 'utf8'))
  } catch {
    return {}
  }
  if (!isObject(base) || profileProblems(base).length > 0) return {}
  const merged = mergeProfile(base, RESILIENCE_OFF_PROFILE, options.profile)
  return { file: writeProfileFile(t, merged, basename(given)) }
}

/** The `config error:` problems of an environment, or [] when it is valid. */
export function configProblems (env: Record<string, string>): string[] {
  try {
    loadConfig(env)
  } catch (error) {
    if (error instanceof ConfigError) return error.problems
    throw error
  }
  return []
}

/**
 * A clock that stands still until the test moves it: what a TTL or a window is measured by, without
 * waiting for it.
 */
export interface ManualClock {
  readonly now: Clock
  advance (ms: number): void
}

export function manualClock (start = Date.now()): ManualClock {
  let at = start
  return { now: () => at, advance: (ms) => { at += ms } }
}

/**
 * The least a wait of `until` is given before it fails: a guard against "never", not a
 * judgement of speed (beside other work on two cores, what takes 100 ms can take seconds).
 */
export const UNTIL_GUARD_MS = 60_000

/**
 * Resolves once `condition()` holds, checking every few milliseconds;
 * rejects after `timeoutMs` or UNTIL_GUARD_MS, whichever is longer. For what
 * happens in the background (a renewal, a log line), instead of sleeping a
 * guessed while.
 */
export async function until (condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const guard = Math.max(timeoutMs, UNTIL_GUARD_MS)
  const deadline = Date.now() + guard
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not so within ${guard} ms`)
    await new Promise(resolve => setTimeout(resolve, 5))
  }
}

/** Claims `key` in an idempotency store, which must give it: the claim, to settle. */
export async function acquire (store: IdempotencyStore, key: string,
  fingerprint: string): Promise<IdempotencyClaim> {
  const begun = await store.begin(key, fingerprint)
  if (begun.state !== 'acquired') throw new Error(`${key}: ${begun.state}, not acquired`)
  return begun.claim
}
