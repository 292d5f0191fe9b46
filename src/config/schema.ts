import { Type, type Static } from '../typebox.ts'
import { DURATION_PATTERN } from './duration.ts'

/**
 * redis:// or rediss:// (TLS; the scheme in any case), an optional
 * user:password@ (reserved characters percent-encoded), a host name, an
 * IPv4 or a bracketed IPv6 address, an optional port and an optional /db.
 */
const REDIS_URL_PATTERN = '^[Rr][Ee][Dd][Ii][Ss][Ss]?://([^\\s/?#@]*@)?([A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?(/[0-9]{1,2})?$'

/** host:port of each Sentinel (a name, an IPv4 or a bracketed IPv6 address), comma-separated. */
const SENTINELS_PATTERN = '^\\s*([A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\]):[0-9]{1,5}(\\s*,\\s*([A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\]):[0-9]{1,5})*\\s*$'

const Milliseconds = (description: string, defaultValue: number) =>
  Type.Integer({ minimum: 1, maximum: 600_000, default: defaultValue, description })

export const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'Listen port' }),
  HOST: Type.Optional(Type.String({ minLength: 1, description: 'Listen address. Unset: 0.0.0.0 (every interface) when CLIENTS_FILE is set, else 127.0.0.1: the sandbox with client authentication off is not offered to the network unless HOST says so (the container image sets 0.0.0.0)', examples: ['0.0.0.0'] })),
  SANDBOX: Type.Optional(Type.Boolean({ description: 'true: front the built-in sandbox hub, also with NODE_ENV=production; false: never. Unset: the sandbox when no hub is configured, except with NODE_ENV=production (start-up refuses)' })),
  UPSTREAM_HUB_URL: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://', description: 'The hub\'s lookup address ({hub_url}, docs/hub.md). Unset together with UPSTREAM_BASE_URL: built-in sandbox', examples: ['https://hub.example.go.id'] })),
  UPSTREAM_BASE_URL: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://', description: 'The hub\'s SP2 and booking address ({base_url}, docs/hub.md)', examples: ['https://base.example.go.id'] })),
  UPSTREAM_API_KEY: Type.Optional(Type.String({ minLength: 1, description: 'Value of the API key header (default: the sandbox key)' })),
  UPSTREAM_ACCESS_TOKEN: Type.Optional(Type.String({ minLength: 1, description: 'Sent verbatim as the Authorization header (default: the sandbox token)' })),
  UPSTREAM_MAX_RESPONSE_BYTES: Type.Integer({ minimum: 1024, default: 16 * 1024 * 1024, description: 'Largest upstream body read; a larger answer is UPSTREAM_BAD_RESPONSE' }),
  UPSTREAM_BODY_BUDGET_BYTES: Type.Integer({ minimum: 0, default: 16 * 1024 * 1024, description: 'Bytes of large upstream bodies (256 KiB or more, with a content-length) read or waiting to be decoded at once; the others wait in their sockets (0: no limit)' }),
  TRANSCODE_THREADS: Type.String({ pattern: '^(auto|[0-9]|1[0-6])$', default: '0', description: 'Worker threads that rewrite hub answers of 256 KiB or more: 0 to 16, or auto (one per core beyond the first, at most 4); 0: all on the main thread. More throughput for large SP2 lists where cores are free, at about 90 MB more peak memory (docs/performance.md); leave 0 in a container given one CPU' }),
  UPSTREAM_DEADLINE_MS: Milliseconds('Overall time a request may spend on the hub, retries included', 15000),
  UPSTREAM_MAX_CALLS_PER_CLIENT: Type.Integer({ minimum: 0, maximum: 100_000, default: 16, description: 'Hub calls one client (one address without authentication) may have in flight at once, lookups waiting on one included; more are 429 RATE_LIMITED. 0: no limit' }),
  CACHE_TTL_SECONDS: Type.Integer({
    minimum: 0,
    maximum: 86400,
    default: 30,
    description: 'How long a successful lookup is cached (0 disables); a profile operation\'s ' +
      'cacheTtlSeconds wins for that operation'
  }),
  CACHE_STALE_IF_ERROR_SECONDS: Type.Integer({ minimum: 0, maximum: 86400, default: 300, description: 'Age up to which a cached answer is served (marked stale) when the hub fails; 0 disables' }),
  CACHE_MAX_BYTES: Type.Integer({
    minimum: 0,
    default: 64 * 1024 * 1024,
    description: 'Memory budget of the lookup cache, in bytes: each entry is charged its answer, ' +
      'its key and its bookkeeping, as measured (docs/operations.md), which bounds their number too'
  }),
  CACHE_FAILURE_SECONDS: Type.Integer({ minimum: 0, maximum: 3600, default: 5, description: 'How long a lookup the hub just failed (unavailable, timeout, unreadable answer) answers that failure again, or a stale answer, without a hub call, even to cache-control: no-cache; 0 disables' }),
  UPSTREAM_CREDENTIALS: Type.Enum(['static', 'login', 'forward'], {
    default: 'static',
    description: 'How the gateway gets the hub token: static (UPSTREAM_ACCESS_TOKEN, its file ' +
      're-read when it changes), login (the gateway logs in as the hub profile\'s login says), ' +
      'forward (the caller\'s x-upstream-authorization)'
  }),
  UPSTREAM_LOGIN_USERNAME: Type.Optional(Type.String({
    minLength: 1,
    description: 'Login mode: the hub account\'s user name, put in the profile\'s login.body ' +
      'where it says "{username}". Never logged'
  })),
  UPSTREAM_LOGIN_PASSWORD: Type.Optional(Type.String({
    minLength: 1,
    description: 'Login mode: the hub account\'s password, put where login.body says ' +
      '"{password}". Never logged'
  })),
  SERVER_MAX_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10_000, description: 'Client connections the server holds at most; more are closed at once (keep it below the open-file limit, ulimit -n, less the hub connections)' }),
  SERVER_HEADERS_TIMEOUT_MS: Milliseconds('Time a client has to send its request headers, checked every second; then 408 and the connection closed', 10000),
  SERVER_REQUEST_TIMEOUT_MS: Milliseconds('Time a client has to send its whole request (headers and body); then 408 and the connection closed. At least SERVER_HEADERS_TIMEOUT_MS', 30000),
  SERVER_KEEP_ALIVE_TIMEOUT_MS: Milliseconds('How long an idle keep-alive connection is kept; above the idle timeout of the load balancer in front (AWS ALB: 60 s), so that the gateway never closes a connection the balancer is about to reuse', 72000),
  SHUTDOWN_GRACE_MS: Milliseconds('On SIGTERM, how long requests in flight may take before the process exits anyway', 10000),
  PRESSURE_MAX_EVENT_LOOP_DELAY_MS: Type.Integer({ minimum: 0, default: 1000, description: 'Event-loop delay above which requests get 503 OVERLOADED (0 disables): the mean over a window as long as this; a window without a turn of the loop counts as over' }),
  PRESSURE_MAX_HEAP_USED_BYTES: Type.Integer({ minimum: 0, default: 0, description: 'Heap use above which requests get 503 OVERLOADED (0 disables)' }),
  PRESSURE_MAX_RSS_BYTES: Type.Integer({ minimum: 0, default: 0, description: 'Resident memory above which requests get 503 OVERLOADED (0 disables)' }),
  UPSTREAM_PROFILE_FILE: Type.Optional(Type.String({
    minLength: 1,
    description: 'JSON file of the hub profile: how the hub addresses, authenticates and ' +
      'answers each operation, and how the gateway calls it (docs/hub.md; deploy/profiles/ ' +
      'ships the documented and the public-callers profiles). Unset: the documented profile',
    examples: ['deploy/profiles/public-callers.json']
  })),
  PLATFORM_ID: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'idPlatform sent with offers (default: the sandbox platform, PLTSBX01)' })),
  UPSTREAM_TRACE_PROPAGATION: Type.Boolean({ default: false, description: 'true: with tracing on (OTEL_*), the hub receives a W3C traceparent (and tracestate) for each hub call, so that its own traces join the gateway\'s; false: nothing of the trace leaves for the hub' }),
  METRICS_PORT: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535, description: 'Serve GET /metrics on this port (on HOST) instead of the API port, so that it need not be exposed with the API; 0: a free port. Unset: /metrics on the API port', examples: [9464] })),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info', description: 'pino log level' }),
  CLIENTS_FILE: Type.Optional(Type.String({
    minLength: 1,
    description: 'JSON file of the clients allowed to call (docs/deployment.md); required when ' +
      'an upstream is configured. Unset in sandbox mode: authentication off',
    examples: ['/etc/customs-gateway/clients.json']
  })),
  RATE_LIMIT_MAX: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 600, description: 'Requests per window per client (per address when unauthenticated), unless the clients file says otherwise' }),
  RATE_LIMIT_WINDOW: Type.String({ pattern: DURATION_PATTERN, default: '1 minute', description: 'Rate limit window, e.g. 1 minute, 30 s, 1 hour' }),
  TRUST_PROXY: Type.Optional(Type.String({ minLength: 1, description: 'The proxies whose X-Forwarded-For is believed, for per-address limits and logged addresses: comma-separated addresses or CIDRs (or loopback, linklocal, uniquelocal), or a hop count (trusts that many proxies whatever their address: only where the gateway is reachable through them alone). Unset: none, the peer address is the caller\'s', examples: ['10.0.0.0/8'] })),
  IDEMPOTENCY_TTL_SECONDS: Type.Integer({ minimum: 1, maximum: 7 * 86400, default: 86400, description: 'How long a write answered under an Idempotency-Key is replayed' }),
  IDEMPOTENCY_MAX_ENTRIES: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10000, description: 'Idempotency keys remembered at most; the oldest are forgotten first' }),
  EVENTS_MAX_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1000, description: 'WebSockets on GET /v1/events at most, in all; more are refused with 503 OVERLOADED before the upgrade' }),
  EVENTS_MAX_PER_CLIENT: Type.Integer({ minimum: 1, maximum: 100_000, default: 8, description: 'WebSockets on GET /v1/events one client (one address without authentication) may hold; more are refused with 429 RATE_LIMITED before the upgrade' }),
  EVENTS_PING_INTERVAL_MS: Milliseconds('How often each WebSocket is pinged (one that has not answered the previous ping is ended) and each event stream (SSE) gets a heartbeat comment, so that proxies keep idle ones open; both are also told the latest position then', 30000),
  EVENTS_MAX_BUFFERED_BYTES: Type.Integer({ minimum: 1024, default: 1024 * 1024, description: 'Bytes of events that may wait for a WebSocket or event stream that does not read them; past this it is closed (WebSocket: 1008), and its reader resumes from its last id when it reconnects' }),
  EVENTS_REPLAY_SECONDS: Type.Integer({
    minimum: 1,
    maximum: 86400,
    default: 300,
    description: 'How long events are kept for readers that resume (Last-Event-ID, ' +
      'lastEventId): a reader that comes back within this window gets what it missed; ' +
      'later, it is told to reload (docs/api.md#events)'
  }),
  EVENTS_REPLAY_MAX: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 10_000, description: 'Events kept for resuming readers at most, whatever their age (the oldest go first); also how many a replica holds while Redis does not answer, past which the oldest are lost and readers told so' }),
  EVENTS_TICKET_SECONDS: Type.Integer({ minimum: 1, maximum: 3600, default: 60, description: 'How long a ticket of POST /v1/events/tickets may be used (once) to open GET /v1/events/stream, for EventSource, which cannot send the key in a header' }),
  CORS_ORIGINS: Type.Optional(Type.String({ pattern: '^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?( *, *https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?)*$', description: 'Comma-separated origins allowed to call from a browser (no wildcard); unset: no CORS headers', examples: ['https://yard.example.co.id,https://ops.example.co.id'] })),
  // Shared state for several replicas (docs/deployment.md#redis). Checked here so that a
  // deployment can be validated against them; the gateway does not use them yet.
  REDIS_URL: Type.Optional(Type.String({ pattern: REDIS_URL_PATTERN, description: 'Shared state for several replicas: the Redis that holds idempotent write answers, rate-limit counters, the shared lookup cache tier, the booked-event fan-out and the hub session (login mode). redis:// or rediss:// (TLS), with user:password@ (percent-encoded) and /db when needed. Unset: all state in memory, for one instance', examples: ['rediss://gateway:PASSWORD@redis.example.internal:6380'] })),
  REDIS_KEY_PREFIX: Type.String({ pattern: '^[A-Za-z0-9:._-]{1,64}$', default: 'cgw:', description: 'Shared state for several replicas: prefix of every Redis key and channel the gateway writes, 1-64 of letters, digits and : . _ -; give each gateway that shares one Redis (another environment, another hub account) its own' }),
  REDIS_COMMAND_TIMEOUT_MS: Type.Integer({
    minimum: 10,
    maximum: 10_000,
    default: 500,
    description: 'Shared state for several replicas: the longest a request waits on one Redis ' +
      'command; past it the command fails and that use degrades as docs/operations.md ' +
      'describes (10 to 10000)'
  }),
  // Redis with failover (docs/deployment.md#redis): kept together.
  REDIS_SENTINELS: Type.Optional(Type.String({ pattern: SENTINELS_PATTERN, description: 'Redis high availability: comma-separated host:port of the Redis Sentinels that watch the master; the replicas ask them for the master and follow its failovers. REDIS_URL then gives only the user, password, database and scheme of the master (its host is not used, e.g. redis://gateway:PASSWORD@mymaster). Unset: REDIS_URL names the server', examples: ['sentinel-1:26379,sentinel-2:26379,sentinel-3:26379'] })),
  REDIS_SENTINEL_MASTER_NAME: Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$', default: 'mymaster', description: 'Redis high availability: the master\'s name in the Sentinels\' configuration (`sentinel monitor <name> ...`)' }),
  REDIS_SENTINEL_USERNAME: Type.Optional(Type.String({ pattern: '^[!-~]{1,128}$', description: 'Redis high availability: the ACL user the Sentinels want, if any', examples: ['gateway'] })),
  REDIS_SENTINEL_PASSWORD: Type.Optional(Type.String({ minLength: 1, description: 'Redis high availability: the Sentinels\' password (`requirepass` of the Sentinels); unset: the Sentinels want none. Never logged' })),
  REDIS_REPLICA_ACK_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 5000, default: 100, description: 'Redis high availability: while the master has replicas in sync, a write with an Idempotency-Key goes to the hub only once a replica holds its claim too (WAIT 1), waited for this long at most; otherwise it is refused with 503 IDEMPOTENCY_UNAVAILABLE, so that a failover cannot lose a claim whose write reached the hub. Below REDIS_COMMAND_TIMEOUT_MS; 0: never wait' }),
}, { additionalProperties: false })

export type RawConfig = Static<typeof ConfigSchema>
