import { Type, type Static } from '../schemas/typebox.ts'

const Milliseconds = (description: string, defaultValue: number) =>
  Type.Integer({ minimum: 1, maximum: 600_000, default: defaultValue, description })

/**
 * Per-operation overrides for what interface.md leaves open (4.10): the
 * response key, the headers an operation sends, the upstream parameter names
 * and the date format of date parameters.
 */
export const OperationOverrideSchema = Type.Object({
  responseKey: Type.Optional(Type.String({ minLength: 1, description: 'Key the upstream answers the list under' })),
  headers: Type.Optional(Type.Array(Type.Enum(['apiKey', 'authorization']), { uniqueItems: true, description: 'Credential headers sent with this operation' })),
  paramNames: Type.Optional(Type.Record(Type.String(), Type.String({ minLength: 1 }), { description: 'Gateway parameter name to upstream parameter name' })),
  dateFormat: Type.Optional(Type.Enum(['YYYYMMDD', 'YYYY-MM-DD'], { description: 'Format of date parameters sent upstream' }))
}, { additionalProperties: false })

export const ConfigSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 3000, description: 'Listen port' }),
  HOST: Type.String({ minLength: 1, default: '0.0.0.0', description: 'Listen address' }),
  UPSTREAM_HUB_URL: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://', description: '{hub_url}: lookups. Unset together with UPSTREAM_BASE_URL: built-in sandbox' })),
  UPSTREAM_BASE_URL: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://', description: '{base_url}: SP2 and booking' })),
  UPSTREAM_API_KEY: Type.Optional(Type.String({ minLength: 1, description: 'Value of the API key header (default: the sandbox key)' })),
  UPSTREAM_API_KEY_HEADER: Type.String({ pattern: '^[A-Za-z0-9!#$%&\'*+.^_`|~-]+$', default: 'customs-api-key', description: 'Name of the API key header' }),
  UPSTREAM_ACCESS_TOKEN: Type.Optional(Type.String({ minLength: 1, description: 'Sent verbatim as the Authorization header (default: the sandbox token)' })),
  UPSTREAM_PATH_SEGMENT: Type.String({ pattern: '^[A-Za-z0-9_-]+$', default: 'HUB', description: 'The path segment written HUB in interface.md' }),
  UPSTREAM_ENV: Type.Enum(['production', 'development'], { default: 'development', description: 'Booking and SP2 address prefixes (interface.md 9)' }),
  UPSTREAM_TIMEZONE: Type.String({ pattern: '^[+-](0\\d|1[0-4]):[0-5]\\d$', default: '+07:00', description: 'UTC offset of upstream local times' }),
  UPSTREAM_PARAM_PLACEMENT: Type.Enum(['query', 'path'], { default: 'query', description: 'Where upstream parameters go (interface.md 4.10.1)' }),
  UPSTREAM_CONNECT_TIMEOUT_MS: Milliseconds('Upstream TCP/TLS connect timeout', 3000),
  UPSTREAM_HEADERS_TIMEOUT_MS: Milliseconds('Time allowed until upstream response headers', 10000),
  UPSTREAM_BODY_TIMEOUT_MS: Milliseconds('Time allowed between upstream body chunks', 10000),
  UPSTREAM_MAX_CONNECTIONS: Type.Integer({ minimum: 1, maximum: 1024, default: 64, description: 'Connections per upstream address' }),
  UPSTREAM_MAX_RESPONSE_BYTES: Type.Integer({ minimum: 1024, default: 16 * 1024 * 1024, description: 'Largest upstream body read' }),
  UPSTREAM_OPERATIONS: Type.Record(Type.String(), OperationOverrideSchema, { default: {}, description: 'JSON: per-operation overrides keyed by upstream operation name' }),
  PLATFORM_ID: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'idPlatform sent with offers (default: the sandbox platform)' })),
  LOG_LEVEL: Type.Enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info', description: 'pino log level' })
}, { additionalProperties: false })

export type RawConfig = Static<typeof ConfigSchema>
