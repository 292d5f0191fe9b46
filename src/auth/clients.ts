import { hash, timingSafeEqual } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { IncomingHttpHeaders } from 'node:http'
import { Value } from 'typebox/value'
import { ConfigError } from '../config/load.ts'
import { DURATION_PATTERN, parseDuration } from '../config/duration.ts'
import { codeOf } from '../errors.ts'
import { Type, type Static } from '../typebox.ts'
import { SCOPES, type Scope } from '../catalogue/scopes.ts'

/** One entry of the CLIENTS_FILE JSON array (docs/deployment.md#clients-and-keys). */
export const ClientEntrySchema = Type.Object(
  {
    name: Type.String({
      pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$',
      description:
        'Who the client is, as audit lines and rate limits name it: 1-64 of letters, digits and ' +
        '`. _ -`'
    }),
    keySha256: Type.String({
      pattern: '^[0-9a-fA-F]{64}$',
      description:
        'Hex SHA-256 of the client key (`npm run client-key` prints it); the key itself is never ' +
        'stored'
    }),
    scopes: Type.Array(Type.Enum(SCOPES), {
      uniqueItems: true,
      description: 'What the client may call'
    }),
    events: Type.Optional(
      Type.Enum(['own', 'all'], {
        description:
          "Which booked events the client's WebSockets receive: `own` (default) those of the " +
          "writes it made itself, `all` every client's"
      })
    ),
    rateLimit: Type.Optional(
      Type.Object(
        {
          max: Type.Optional(
            Type.Integer({
              minimum: 1,
              maximum: 1_000_000,
              description: 'Requests per window (default RATE_LIMIT_MAX)'
            })
          ),
          timeWindow: Type.Optional(
            Type.String({
              pattern: DURATION_PATTERN,
              description: 'The window, e.g. `1 minute` (default RATE_LIMIT_WINDOW)'
            })
          )
        },
        { additionalProperties: false, description: "This client's own limit" }
      )
    )
  },
  { additionalProperties: false }
)

export type ClientEntry = Static<typeof ClientEntrySchema>

/** An authenticated caller, as `request.client` holds it. */
export interface AuthenticatedClient {
  readonly name: string
  readonly scopes: readonly Scope[]
  /** Which booked events its WebSockets receive (plugins/events.ts). */
  readonly events: 'own' | 'all'
  readonly rateLimit: { readonly max?: number, readonly timeWindowMs?: number }
}

export interface ClientRegistry {
  readonly size: number
  /** The client holding this key, or null. */
  authenticate (key: string): AuthenticatedClient | null
  /**
   * The client of this name, or null (an event-stream ticket names the client it was issued to).
   */
  find (name: string): AuthenticatedClient | null
}

/**
 * Checks a parsed clients file: the schema per entry, then unique names and
 * unique keys. Returns one line per problem, naming the entry and the field.
 */
export function clientsFileProblems (value: unknown): string[] {
  if (!Array.isArray(value)) return ['must be a JSON array of clients']
  if (value.length === 0) return ['must list at least one client']
  const problems: string[] = []
  value.forEach((entry, i) => {
    const name =
      typeof entry === 'object' &&
      entry !== null &&
      typeof (entry as { name?: unknown }).name === 'string'
        ? ` (${JSON.stringify((entry as { name: string }).name).slice(0, 70)})`
        : ''
    const seen = new Set<string>()
    for (const error of Value.Errors(ClientEntrySchema, entry)) {
      if (error.keyword === 'boolean') continue // the additionalProperties line says it better
      const params = error.params as {
        allowedValues?: unknown[]
        additionalProperties?: string[]
        requiredProperties?: string[]
      }
      const field = error.instancePath.replace(/^\//, '').replaceAll('/', '.')
      let line: string
      if (params.additionalProperties !== undefined) {
        line =
          `${field === '' ? '' : `${field}: `}unknown ` +
          'field ' +
          `${params.additionalProperties.join(', ')}`
      } else {
        line =
          `${field === '' ? 'entry' : field}: ` +
          `${error.message}` +
          `${params.allowedValues === undefined ? '' : ` (${params.allowedValues.join(', ')})`}`
      }
      if (!seen.has(line)) problems.push(`entry ${i + 1}${name}: ${line}`)
      seen.add(line)
    }
  })
  if (problems.length > 0) return problems
  const entries = value as ClientEntry[]
  const names = new Map<string, number>()
  const hashes = new Map<string, number>()
  entries.forEach((entry, i) => {
    const sameName = names.get(entry.name)
    if (sameName !== undefined) {
      problems.push(`entry ${i + 1} ("${entry.name}"): name: already ` +
      `used by entry ${sameName + 1}`)
    }
    names.set(entry.name, i)
    const hash = entry.keySha256.toLowerCase()
    const sameKey = hashes.get(hash)
    if (sameKey !== undefined) {
      problems.push(
        `entry ${i + 1} ("${entry.name}"): keySha256: the same key as entry ${sameKey + 1}; ` +
        'every client needs its own key'
      )
    }
    hashes.set(hash, i)
  })
  return problems
}

/** Reads and checks CLIENTS_FILE once at start-up; a bad file is a ConfigError. */
export function loadClientsFile (path: string): ClientEntry[] {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new ConfigError([`CLIENTS_FILE: cannot read ${path} (${codeOf(error) ?? 'error'})`])
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new ConfigError([`CLIENTS_FILE: ${path} is not valid JSON`])
  }
  const problems = clientsFileProblems(value)
  if (problems.length > 0) throw new ConfigError(problems.map(p => `CLIENTS_FILE: ${p}`))
  return value as ClientEntry[]
}

/**
 * The clients, looked up by key. The presented key is hashed and compared
 * with every client's hash with `timingSafeEqual`, all of them, without an
 * early exit: how long a lookup takes says nothing about which client, if
 * any, was close. (A Map keyed by hash would also be safe, since the hash
 * gives nothing away about the key, but the loop is as fast for a handful of
 * clients and needs no such argument.)
 *
 * A key that matched is remembered with its client, so that a client's later
 * requests skip the SHA-256 (the largest part of resolving the client on a
 * small lookup). Only matched keys are kept: at most one per client, so
 * unknown keys cannot grow it. A Map lookup compares string contents only
 * with an entry whose 32-bit string hash (seeded at random per process) is
 * the same; a request with an unknown key gets no further than that and goes
 * on to the constant-time loop, so its timing tells a guesser no more than
 * before.
 */
export function createClientRegistry (entries: readonly ClientEntry[]): ClientRegistry {
  const clients = entries.map((entry) => ({
    hash: Buffer.from(entry.keySha256, 'hex'),
    client: Object.freeze({
      name: entry.name,
      scopes: Object.freeze([...entry.scopes]),
      events: entry.events ?? 'own',
      rateLimit: Object.freeze({
        ...(entry.rateLimit?.max === undefined ? {} : { max: entry.rateLimit.max }),
        ...(entry.rateLimit?.timeWindow === undefined
          ? {}
          : { timeWindowMs: parseDuration(entry.rateLimit.timeWindow) })
      })
    }) satisfies AuthenticatedClient
  }))
  const known = new Map<string, AuthenticatedClient>()
  return {
    size: clients.length,
    authenticate (key) {
      const remembered = known.get(key)
      if (remembered !== undefined) return remembered
      const presented = hash('sha256', key, 'buffer')
      let found: AuthenticatedClient | null = null
      for (const { hash, client } of clients) {
        if (timingSafeEqual(presented, hash) && found === null) found = client
      }
      if (found !== null) known.set(key, found)
      return found
    },
    find (name) {
      return clients.find(entry => entry.client.name === name)?.client ?? null
    }
  }
}

/** Longest credential looked at; anything longer cannot be a key and is not hashed. */
const MAX_KEY_LENGTH = 512
const BEARER = /^Bearer +([\x21-\x7e]{1,512}) *$/i

/**
 * A real WebSocket upgrade, as Node's HTTP server takes one: `Upgrade:
 * websocket` and `upgrade` among the `Connection` tokens. Without the second,
 * Node serves the request as a plain GET.
 */
export function isWebSocketUpgrade (headers: IncomingHttpHeaders): boolean {
  return headers.upgrade?.toLowerCase() === 'websocket' &&
    (headers.connection ?? '').split(',').some(token => token.trim().toLowerCase() === 'upgrade')
}

/**
 * The client key a request presents: `Authorization: Bearer <key>`, or, on a
 * real WebSocket upgrade only (browsers cannot set headers there),
 * `Sec-WebSocket-Protocol: bearer, <key>`. Never the query string: URLs are
 * logged. Undefined when none is presented; '' when one is presented but
 * malformed (it then matches no client).
 */
export function presentedKey (headers: IncomingHttpHeaders): string | undefined {
  const authorization = headers.authorization
  if (authorization !== undefined) return BEARER.exec(authorization)?.[1] ?? ''
  const protocols = headers['sec-websocket-protocol']
  if (typeof protocols === 'string' && isWebSocketUpgrade(headers)) {
    const offered = protocols.split(',').map(p => p.trim())
    const at = offered.indexOf('bearer')
    if (at === -1) return undefined
    const key = offered[at + 1] ?? ''
    return key.length <= MAX_KEY_LENGTH ? key : ''
  }
  return undefined
}

/**
 * The WebSocket subprotocol the gateway agrees to: `bearer`, when offered (ws `handleProtocols`).
 */
export function selectProtocol (offered: Set<string>): string | false {
  return offered.has('bearer') ? 'bearer' : false
}
