import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { HubSession, TokenStore } from '../types.ts'
import { redisReason, type RedisConnection } from './connection.ts'
import { parseVersioned } from './versioned.ts'

export interface RedisTokenStoreOptions {
  connection: RedisConnection
  /** How long the login lock is held at most: longer than a login may take (its timeout). */
  lockTtlMs: number
  /** How long a holder that finds the lock taken waits for the new session before logging in itself (default lockTtlMs). */
  waitMs?: number
  /** The clock, in ms (tests move it). */
  now?: () => number
}

/** The shared session and its login lock, under the key prefix. */
export const SESSION_KEY = 'hub-session'
export const LOCK_KEY = 'hub-session:lock'
/**
 * Format of the session value; a reader ignores any other (the login-lock script in scripts.ts checks it too).
 * `renewAt` and `refreshToken` are optional members of format 1: a reader without them ignores them.
 */
const VERSION = 1
const POLL_FIRST_MS = 10
const POLL_MAX_MS = 100

function decode (text: string): HubSession | undefined {
  const value = parseVersioned(text, VERSION)
  if (value === undefined) return undefined
  const { authorization, expiresAt, renewAt, refreshToken } = value
  if (typeof authorization !== 'string' || typeof expiresAt !== 'number') return undefined
  // Written before refresh tokens (or without login.refreshPath): none, and renewed by login.
  return {
    authorization,
    expiresAt,
    ...(typeof renewAt === 'number' ? { renewAt } : {}),
    ...(typeof refreshToken === 'string' && refreshToken !== '' ? { refreshToken } : {})
  }
}

/**
 * The hub session shared by every replica (UPSTREAM_CREDENTIALS=login): one
 * login under a lock, the others wait for its session. A session due for
 * renewal is passed as `rejected` like a refused one: with `undefined`,
 * renew() returns the shared session that exists. Redis trouble never
 * stops a login: without Redis a replica logs in itself, as one instance does.
 * The session holds a bearer token and the refresh token: see docs/deployment.md#redis on
 * securing Redis.
 */
export function createRedisTokenStore (options: RedisTokenStoreOptions): TokenStore {
  const { connection, lockTtlMs, now = Date.now } = options
  const waitMs = options.waitMs ?? lockTtlMs
  const { client, scripts, log } = connection
  // Concurrent renewals of the same session in this replica share one.
  const renewing = new Map<string, Promise<HubSession>>()

  async function read (): Promise<HubSession | undefined> {
    if (connection.health() === 'down') return undefined
    let text: string | null
    try {
      text = await client.get(SESSION_KEY)
    } catch (error) {
      log.warn({ reason: redisReason(error) }, 'hub session: reading it from Redis failed')
      return undefined
    }
    if (text === null) return undefined
    const session = decode(text)
    return session !== undefined && session.expiresAt > now() ? session : undefined
  }

  async function store (session: HubSession) {
    const ttlMs = Math.ceil(session.expiresAt - now())
    if (ttlMs <= 0) return
    await client.set(SESSION_KEY, JSON.stringify({ v: VERSION, ...session }), 'PX', ttlMs)
  }

  async function renew (rejected: string | undefined, login: () => Promise<HubSession>): Promise<HubSession> {
    const deadline = now() + waitMs
    let interval = POLL_FIRST_MS
    for (;;) {
      const lock = randomUUID()
      let reply
      try {
        if (connection.health() !== 'up') throw new Error(`redis is ${connection.health()}`)
        reply = await scripts.stateLoginLock(SESSION_KEY, LOCK_KEY, rejected ?? '', lock, lockTtlMs)
      } catch (error) {
        log.warn({ reason: redisReason(error) }, 'hub session: Redis unavailable, logging in without it')
        return await login()
      }
      if (reply[0] === 'session') {
        const session = decode(reply[1])
        if (session !== undefined && session.expiresAt > now()) return session
      }
      if (reply[0] === 'locked') return await loginLocked(lock, login)
      // Another holder is logging in: wait for its session, or for its lock to go.
      if (now() >= deadline) {
        log.warn('hub session: the login lock stayed taken, logging in without it')
        return await login()
      }
      await sleep(Math.min(interval, Math.max(1, deadline - now())))
      interval = Math.min(interval * 2, POLL_MAX_MS)
    }
  }

  async function loginLocked (lock: string, login: () => Promise<HubSession>): Promise<HubSession> {
    try {
      const session = await login()
      try {
        await store(session)
      } catch (error) {
        log.warn({ reason: redisReason(error) }, 'hub session: storing it in Redis failed; other replicas will log in themselves')
      }
      return session
    } finally {
      scripts.stateRelease(LOCK_KEY, lock).catch((error: unknown) => log.warn({ reason: redisReason(error) }, 'hub session: releasing the login lock failed; it expires'))
    }
  }

  return {
    get: read,
    renew (rejected, login) {
      const key = rejected ?? ''
      let pending = renewing.get(key)
      if (pending === undefined) {
        pending = renew(rejected, login).finally(() => renewing.delete(key))
        renewing.set(key, pending)
      }
      return pending
    }
  }
}
