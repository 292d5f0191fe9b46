import {
  DEFAULT_API_KEY_HEADER, DEFAULT_HOST, DEFAULT_PATH_SEGMENT, DEFAULT_RECORD_LIMIT, DEFAULT_SLOW_MS,
  SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_PLATFORM_ID
} from './constants.ts'
import type { FaultName } from './faults.ts'
import {
  createTokenBook,
  SANDBOX_LOGIN_PATH,
  SANDBOX_REFRESH_PATH,
  type TokenBook
} from './tokens.ts'
import type { SandboxOptions } from './types.ts'

export interface SandboxConfig {
  host: string
  port: number
  apiKey: string
  /** Lower-cased, as node presents incoming header names. */
  apiKeyHeader: string
  accessToken: string
  pathSegment: string
  platformId: string
  latencyMs: number
  jitterMs: number
  slowMs: number
  /** Accepted Authorization values; mutable (rotation, login). */
  tokens: TokenBook
  loginTokenTtlMs: number
  /** The form of the login and renewal answers (login.ts). */
  loginAnswer: 'plain' | 'envelope'
  /** Whether the login and renewal issue refresh tokens. */
  refreshTokens: boolean
  refreshTokenTtlMs: number
  loginPath: string
  refreshPath: string
  /** Requests kept in the record. */
  recordLimit: number
  /** A fault applied to every hub operation while set. */
  fault?: FaultName
}

export function nonNegative (value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback
  if (!Number.isFinite(value) || value < 0) {
    throw new TypeError(`sandbox option ${name} must ` +
    'be a non-negative number')
  }
  return value
}

/**
 * An absolute path without a trailing slash (the sandbox matches its paths with the slash
 * optional).
 */
function pathOption (value: string | undefined, fallback: string, name: string): string {
  if (value === undefined) return fallback
  const bare = value.replace(/\/+$/, '')
  if (!bare.startsWith('/') || /[?#\s]/.test(bare)) {
    throw new TypeError('sandbox option ' +
    `${name} must be an absolute path without query or spaces`)
  }
  return bare
}

/**
 * The options, checked; `profiled`: a hub profile is played, which names the addresses and headers
 * itself.
 */
export function resolveOptions (options: SandboxOptions = {}, profiled = false): SandboxConfig {
  if (profiled && (options.apiKeyHeader !== undefined || options.pathSegment !== undefined)) {
    throw new TypeError(
      'sandbox options apiKeyHeader and pathSegment do not go with a profile: the profile names ' +
      'the headers and the addresses'
    )
  }
  const pathSegment = options.pathSegment ?? DEFAULT_PATH_SEGMENT
  if (pathSegment === '' || pathSegment.includes('/')) {
    throw new TypeError('sandbox option ' +
    'pathSegment must be one non-empty path segment')
  }
  return {
    host: options.host ?? DEFAULT_HOST,
    port: nonNegative(options.port, 0, 'port'),
    apiKey: options.apiKey ?? SANDBOX_API_KEY,
    apiKeyHeader: (options.apiKeyHeader ?? DEFAULT_API_KEY_HEADER).toLowerCase(),
    accessToken: options.accessToken ?? SANDBOX_ACCESS_TOKEN,
    pathSegment,
    platformId: options.platformId ?? SANDBOX_PLATFORM_ID,
    latencyMs: nonNegative(options.latencyMs, 0, 'latencyMs'),
    jitterMs: nonNegative(options.jitterMs, 0, 'jitterMs'),
    slowMs: nonNegative(options.slowMs, DEFAULT_SLOW_MS, 'slowMs'),
    tokens: createTokenBook(
      [options.accessToken ?? SANDBOX_ACCESS_TOKEN, ...(options.acceptedTokens ?? [])],
      options.now
    ),
    loginTokenTtlMs: nonNegative(options.loginTokenTtlMs, 300_000, 'loginTokenTtlMs'),
    loginAnswer: options.loginAnswer ?? 'plain',
    refreshTokens: options.refreshTokens ?? options.loginAnswer === 'envelope',
    refreshTokenTtlMs: nonNegative(options.refreshTokenTtlMs, 86_400_000, 'refreshTokenTtlMs'),
    loginPath: pathOption(options.loginPath, SANDBOX_LOGIN_PATH, 'loginPath'),
    refreshPath: pathOption(options.refreshPath, SANDBOX_REFRESH_PATH, 'refreshPath'),
    recordLimit: nonNegative(options.recordLimit, DEFAULT_RECORD_LIMIT, 'recordLimit')
  }
}
