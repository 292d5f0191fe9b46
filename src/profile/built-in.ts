/**
 * What a hub profile says where it is silent: the hub as its own interface
 * document describes it (the `documented` profile), and how the gateway
 * calls it. One place for these values: the schema's words, the resolver
 * and the generated reference read them here.
 */
export const BUILT_IN = {
  name: 'documented',
  /** The hub's local times are West Indonesia Time. */
  timeZone: '+07:00',
  /** The document's prefixes, with SP2 and booking under the development one. */
  prefixes: { lookup: '/V1/HUB/INT/AUTH', sp2: '/HUB-DEV', booking: '/HUB-DEV' },
  /** The document's production prefix of SP2 and booking, which a profile names in `prefixes`. */
  productionPrefix: '/V3/HUB',
  tokenScheme: 'Bearer',
  connections: { max: 64, connectTimeoutMs: 3000 },
  retries: { count: 2, baseMs: 100, maxMs: 2000 },
  breaker: { errorPercentage: 50, volumeThreshold: 5, windowMs: 10_000, resetMs: 10_000 },
  login: {
    service: 'base',
    body: { username: '{username}', password: '{password}' },
    tokenField: 'access_token',
    expiresField: 'expires_in',
    refreshTokenField: 'refresh_token',
    renewBeforeSeconds: 60,
    minIntervalSeconds: 30
  },
  settings: {
    apiKeyHeader: 'customs-api-key',
    tokenHeader: 'Authorization',
    dateSent: 'YYYYMMDD',
    dateAnswered: 'YYYY-MM-DD HH:MM:SS.S',
    errorFields: ['message'],
    nullStrings: [],
    timeouts: { headersMs: 10_000, bodyMs: 10_000 }
  }
} as const

/** The placeholders of a login body that the account settings replace. */
export const LOGIN_PLACEHOLDERS = { username: '{username}', password: '{password}' } as const
