import { OPERATIONS } from '../catalogue/operations.ts'
import type { HubOperation } from '../catalogue/types.ts'
import { Type, type Static, type TSchema } from '../typebox.ts'
import { BUILT_IN } from './built-in.ts'

/**
 * The hub profile (UPSTREAM_PROFILE_FILE): how one variant of the hub
 * addresses, authenticates and answers each operation of the catalogue.
 * docs/hub.md#hub-profiles describes it for people, and docs/reference/profile.md
 * (generated) member by member; deploy/profiles/profile.schema.json is this
 * schema as JSON Schema, generated (`npm run openapi`) and held to it by a
 * test. Profile files are read by the gateway (profile/load.ts) and by the
 * sandbox, each with its own code.
 */

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = '^[A-Za-z0-9!#$%&\'*+.^_`|~-]+$'
/** Characters of a path segment that need no encoding (RFC 3986 pchar, without `%`); the `-` last in each class, where it is itself. */
const SEGMENT_CHARS = 'A-Za-z0-9._~!$&\'()*+,;=:@'
/** An address prefix: empty, or `/`-separated segments with a leading `/` and no trailing one. */
const PREFIX = `^(/[${SEGMENT_CHARS}-]+)*$`
/** An address path after the prefix: segments and `{placeholders}`, no leading `/`, a trailing `/` allowed. */
const PATH = `^([${SEGMENT_CHARS}{}-]+)(/[${SEGMENT_CHARS}{}-]*)*$`
/** A parameter's hub name. */
const PARAM_NAME = `^[${SEGMENT_CHARS}-]+$`
/** A member of a JSON answer, or a dotted path to one (`item.access_token`). */
const FIELD_PATH = '^[A-Za-z0-9_$@-]+(\\.[A-Za-z0-9_$@-]+)*$'
/** The login's address path: segments each after a `/`, a trailing `/` allowed. */
const LOGIN_PATH = `^(/[${SEGMENT_CHARS}-]+)+/?$`
/** A UTC offset, `+07:00`. */
const TIME_ZONE = '^[+-](0\\d|1[0-4]):[0-5]\\d$'

/** What each pattern allows, in words, for the problems a person reads (problems.ts). */
export const PATTERN_FORMS: Readonly<Record<string, string>> = {
  [HEADER_NAME]: 'a header name: letters, digits and !#$%&\'*+.^_`|~- (no spaces or colons)',
  [PREFIX]: 'an address prefix such as /V1/NLE/INT/AUTH: segments each after a /, no / at the end (or empty)',
  [PATH]: 'an address path such as noblbc20/{npwp}: segments and {placeholders} between /, no / at the start, no ? or # (parameters without a placeholder go in the query string)',
  [FIELD_PATH]: 'a member name, or a dotted path such as item.access_token',
  [PARAM_NAME]: 'a parameter name: letters, digits and ._~!$&\'()*+,;=:@-',
  [LOGIN_PATH]: 'an address path such as /auth/login: segments each after a /',
  [TIME_ZONE]: 'a UTC offset written +HH:MM or -HH:MM (hours 00 to 14), such as +07:00',
  '^[A-Za-z0-9._-]{1,64}$': 'a name of 1 to 64 letters, digits and ._-',
  '^[A-Za-z0-9-]*$': 'a scheme such as Bearer: letters, digits and - (or empty)'
}

const HeaderName = (description: string) => Type.String({ pattern: HEADER_NAME, maxLength: 64, description })
const FieldPath = (description: string) => Type.String({ pattern: FIELD_PATH, maxLength: 128, description })
const Prefix = (description: string) => Type.String({ pattern: PREFIX, maxLength: 200, description })
const Ms = (description: string) => Type.Integer({ minimum: 1, maximum: 600_000, description })
const Count = (minimum: number, maximum: number, description: string) =>
  Type.Integer({ minimum, maximum, description })

export const DATE_SENT = ['YYYYMMDD', 'YYYY-MM-DD'] as const
/** Day-month-name forms are an Oracle-backed hub's (`21-MAY-23`): YY 00-49 is 20YY, else 19YY. */
export const DATE_ANSWERED = [
  'YYYY-MM-DD HH:MM:SS.S', 'YYYY-MM-DD', 'YYYYMMDD', 'DD-MON-YY', 'DD-MON-YYYY'
] as const
/** What a 200 that reports a failure is answered as: a contract code, or EMPTY (no data: an empty list; for a record, UPSTREAM_NOT_FOUND). */
export const FAILURE_CODES = ['UPSTREAM_REJECTED', 'UPSTREAM_NOT_FOUND', 'UPSTREAM_AUTH_FAILED', 'UPSTREAM_UNAVAILABLE', 'UPSTREAM_BAD_RESPONSE', 'EMPTY'] as const
export const CREDENTIALS = ['apiKey', 'token'] as const
/** How the hub answers a list lookup that finds nothing: an empty list, or a 404. */
export const NOT_FOUND_ANSWERS = ['empty', '404'] as const

const FailureCode = (description: string) => Type.Enum(FAILURE_CODES, { description })

export const FailureSchema = Type.Object({
  statusField: Type.Optional(FieldPath('A member of the answer holding its status: an answer where it is present and its value is none of `successValues` is a failure')),
  successValues: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 16, uniqueItems: true, description: 'The values of `statusField` that mean success, compared without letter case and surrounding spaces (default: `success`)' })),
  statusCodeField: Type.Optional(FieldPath('A member holding the HTTP status of the failure: a 200 reporting failure is then answered as that status would be')),
  messageWithoutData: Type.Optional(Type.Boolean({ description: 'true: an answer without its data (no list for a list operation, no identity fields for a record) that carries an error text (`errorFields`) is a failure' })),
  codes: Type.Optional(Type.Array(Type.Object({
    match: Type.String({ minLength: 1, maxLength: 200, description: 'A regular expression (JavaScript, matched without letter case) on the error text' }),
    code: FailureCode('What a failure whose text matches is answered as')
  }, { additionalProperties: false, description: 'A rule: the first whose `match` finds the error text decides' }), { maxItems: 32, description: 'Which code a failure is answered as, by its text (when `statusCodeField` gives no status)' })),
  otherwise: Type.Optional(FailureCode('What a failure no rule matches is answered as (default UPSTREAM_REJECTED)'))
}, { additionalProperties: false, description: 'How a 2xx answer that reports a failure is recognised, and what it is answered as. Without it, a 2xx answer is never a failure' })

/** What can be set for every operation (`defaults`) and for each one (`operations`). */
const settings = {
  apiKeyHeader: Type.Optional(Type.Union([
    HeaderName('The header name'),
    Type.Array(HeaderName('A header name'), { minItems: 1, maxItems: 4, uniqueItems: true })
  ], { description: 'The name of the header that carries the API key, or several names: the key is sent under each' })),
  tokenHeader: Type.Optional(HeaderName('The name of the header that carries the access token (Authorization by default)')),
  credentials: Type.Optional(Type.Array(Type.Enum(CREDENTIALS), { uniqueItems: true, maxItems: 2, description: 'The credentials sent: the API key, the access token, both, or none (`[]`)' })),
  answerKey: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Where the data is in the answer: the member holding the list (or the record), or `*` for the answer itself when it is an array, else its only array-valued member. In `defaults`, only for the operations that answer a list' })),
  dateSent: Type.Optional(Type.Enum(DATE_SENT, { description: 'The form dates are sent in' })),
  dateAnswered: Type.Optional(Type.Enum(DATE_ANSWERED, { description: 'The form of the days the hub answers with a time of day (bill of lading and declaration dates): with the time (`YYYY-MM-DD HH:MM:SS.S`), or the day alone' })),
  errorFields: Type.Optional(Type.Array(FieldPath('A member of an error answer'), { minItems: 1, maxItems: 8, uniqueItems: true, description: 'The members of an error answer that carry its text, tried in order' })),
  nullStrings: Type.Optional(Type.Array(Type.String({ maxLength: 16 }), { maxItems: 8, uniqueItems: true, description: 'Strings that mean null (`"null"`, `""`)' })),
  failure: Type.Optional(FailureSchema),
  notFound: Type.Optional(Type.Enum(NOT_FOUND_ANSWERS, {
    description: 'How the hub answers a list lookup that finds nothing: `empty`, an empty list ' +
      '(a 404 is then UPSTREAM_NOT_FOUND); `404`, a 404, answered as an empty list. ' +
      'Only for the operations that answer a list (default `empty`)'
  })),
  timeouts: Type.Optional(Type.Object({
    headersMs: Type.Optional(Ms('Time allowed until the answer\'s headers, in ms ' +
      `(default ${BUILT_IN.settings.timeouts.headersMs})`)),
    bodyMs: Type.Optional(Ms('Time allowed between two chunks of the answer\'s body, in ms ' +
      `(default ${BUILT_IN.settings.timeouts.bodyMs})`))
  }, { additionalProperties: false, description: 'How long a call waits on the hub' }))
}

export const SettingsSchema = Type.Object(settings, { additionalProperties: false, description: 'Settings for every operation; an operation\'s own settings win' })

const SERVICE_WORDS = 'Which address it is under: {hub_url} (UPSTREAM_HUB_URL) or {base_url} (UPSTREAM_BASE_URL)'
const PATH_WORDS = 'Its address after the prefix, a `{placeholder}` for each parameter sent in the path, by its hub name, a whole segment each: the placeholders fix their order; the other parameters go in the query string'

/** Where an operation's address is; with the settings, an operation's entry. */
const address = {
  service: Type.Optional(Type.Enum(['hub', 'base'], { description: SERVICE_WORDS })),
  prefix: Type.Optional(Prefix('Its address prefix, in place of the prefix of its area')),
  path: Type.Optional(Type.String({ pattern: PATH, maxLength: 300, description: PATH_WORDS }))
}

/** What a record operation's entry may set: a record's 404 is always UPSTREAM_NOT_FOUND. */
const { notFound: _notFound, ...recordSettings } = settings

const CacheTtl = Type.Integer({
  minimum: 0,
  maximum: 86400,
  description: 'How long its answers are cached, in seconds (0: not cached); default ' +
    'CACHE_TTL_SECONDS'
})

/** One operation's entry, with the parameters and defaults of its catalogue entry in the words. */
function operationSchema (op: HubOperation): TSchema {
  const names = [...op.params.map(p => p.name), ...(op.alsoTakes ?? [])]
  const params = Type.Object(Object.fromEntries(names.map(name => [name, Type.Optional(Type.String({ pattern: PARAM_NAME, maxLength: 64, description: `The hub's name of ${name}` }))])), {
    additionalProperties: false,
    description: `The parameters it takes, by the gateway's name, each with the hub's: of ${names.join(', ')}. Given, it replaces the default set (${op.params.map(p => `${p.name}: ${p.upstream}`).join(', ') || 'none'}); the route then takes exactly these`
  })
  return Type.Object({
    ...(op.response.type === 'record' ? recordSettings : settings),
    service: Type.Optional(Type.Enum(['hub', 'base'], { description: `${SERVICE_WORDS} (default ${op.service})` })),
    prefix: Type.Optional(Prefix(`Its address prefix, in place of the prefix of its area (${op.area})`)),
    path: Type.Optional(Type.String({ pattern: PATH, maxLength: 300, description: `${PATH_WORDS} (default \`${op.path}\`)` })),
    params: Type.Optional(params),
    ...(op.method === 'GET' ? { cacheTtlSeconds: Type.Optional(CacheTtl) } : {})
  }, { additionalProperties: false, description: op.title })
}

/** Any operation's entry: what a valid profile's entries are, as a type. */
const OperationEntrySchema = Type.Object({
  ...settings,
  ...address,
  params: Type.Optional(Type.Record(Type.String(), Type.String(), {
    description: 'The parameters it takes, by the gateway\'s name, each with the hub\'s. ' +
      'Given, it replaces the default set, and the route then takes exactly these'
  })),
  cacheTtlSeconds: Type.Optional(CacheTtl)
}, { additionalProperties: false })

const { connections, retries, breaker, login } = BUILT_IN

/** `description` with the built-in value it defaults to. */
const withDefault = (description: string, value: unknown) =>
  `${description} (default ${typeof value === 'string' ? value : JSON.stringify(value)})`

/** How the gateway calls the hub: its connections, retries and circuit breaker. */
const calling = {
  connections: Type.Optional(Type.Object({
    max: Type.Optional(Count(1, 1024, withDefault('Connections per hub address', connections.max))),
    connectTimeoutMs: Type.Optional(Ms(withDefault('Time allowed to open a connection (TCP and ' +
      'TLS), in ms', connections.connectTimeoutMs)))
  }, { additionalProperties: false, description: 'The connections to each hub address' })),
  retries: Type.Optional(Type.Object({
    count: Type.Optional(Count(0, 10, withDefault('Retries of a GET lookup on a refused or reset ' +
      'connection and on 502, 503 and 504; a POST is never retried', retries.count))),
    baseMs: Type.Optional(Ms(withDefault('The first retry\'s delay, doubled at each retry, with ' +
      'full jitter', retries.baseMs))),
    maxMs: Type.Optional(Ms(withDefault('The longest delay; a longer retry-after of the hub is ' +
      'not waited for', retries.maxMs)))
  }, {
    additionalProperties: false,
    description: 'How a failed lookup is retried, within the deadline'
  })),
  breaker: Type.Optional(Type.Object({
    errorPercentage: Type.Optional(Count(1, 100, withDefault('The share of failed calls in the ' +
      'window that opens the circuit', breaker.errorPercentage))),
    volumeThreshold: Type.Optional(Count(1, 100_000_000, withDefault('Calls in the window before ' +
      'the circuit may open', breaker.volumeThreshold))),
    windowMs: Type.Optional(Ms(withDefault('The rolling window of the statistics, in ms',
      breaker.windowMs))),
    resetMs: Type.Optional(Ms(withDefault('How long an open circuit waits before one trial call, ' +
      'in ms', breaker.resetMs)))
  }, {
    additionalProperties: false,
    description: 'The circuit breaker, one per hub address and operation'
  }))
}

const loginSchema = Type.Object({
  service: Type.Optional(Type.Enum(['hub', 'base'], {
    description: withDefault('Which address the login and its renewal are under', login.service)
  })),
  path: Type.Optional(Type.String({
    pattern: LOGIN_PATH,
    maxLength: 200,
    description: 'The login\'s address path: a POST of `body` as JSON. Login mode needs it'
  })),
  refreshPath: Type.Optional(Type.String({
    pattern: LOGIN_PATH,
    maxLength: 200,
    description: 'The renewal\'s address path: a POST carrying `Authorization: Bearer <refresh ' +
      'token>`, answered like the login. Without one, every renewal is a new login'
  })),
  body: Type.Optional(Type.Record(Type.String(), Type.Unknown(), {
    description: withDefault('The login\'s JSON body: its string values "{username}" and ' +
      '"{password}" are replaced by UPSTREAM_LOGIN_USERNAME and UPSTREAM_LOGIN_PASSWORD; never ' +
      'write the account here', login.body)
  })),
  tokenField: Type.Optional(FieldPath(withDefault('Where the access token is in the login\'s and ' +
    'the renewal\'s answers', login.tokenField))),
  expiresField: Type.Optional(FieldPath(withDefault('Where its lifetime in seconds is',
    login.expiresField))),
  refreshTokenField: Type.Optional(FieldPath(withDefault('Where the refresh token is',
    login.refreshTokenField))),
  renewBeforeSeconds: Type.Optional(Count(0, 86400, withDefault('Renew the token this long ' +
    'before it expires (at half its lifetime when that comes first), in seconds',
  login.renewBeforeSeconds))),
  minIntervalSeconds: Type.Optional(Count(0, 3600, withDefault('At most one login per this ' +
    'interval that is not due to the token\'s lifetime (a hub 401, a failed login), so that the ' +
    'gateway cannot lock the hub account', login.minIntervalSeconds)))
}, {
  additionalProperties: false,
  description: 'The hub\'s login (UPSTREAM_CREDENTIALS=login): where it is, what it is sent, ' +
    'where its answers keep the token, and how often it is used'
})

function profileSchema<O extends TSchema> (operations: O) {
  return Type.Object({
    $schema: Type.Optional(Type.String({ description: 'The JSON Schema of the file, for editors' })),
    name: Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$', description: 'The profile\'s name, shown in the start-up log and /health/ready' }),
    description: Type.Optional(Type.String({ maxLength: 2000, description: 'What hub this profile describes, and from what' })),
    prefixes: Type.Optional(Type.Object({
      lookup: Type.Optional(Prefix('Prefix of the lookups (BL lists, declarations, container lists)')),
      sp2: Type.Optional(Prefix('Prefix of the SP2 operations')),
      booking: Type.Optional(Prefix('Prefix of the booking operations'))
    }, {
      additionalProperties: false,
      description: withDefault('The address prefix of each area, before each operation\'s path',
        Object.entries(BUILT_IN.prefixes).map(([area, prefix]) => `${area} ${prefix}`).join(', '))
    })),
    timeZone: Type.Optional(Type.String({
      pattern: TIME_ZONE,
      description: withDefault('The UTC offset of the hub\'s local times', BUILT_IN.timeZone)
    })),
    tokenScheme: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9-]*$', maxLength: 32, description: 'The scheme put before an access token the gateway got by logging in (`Bearer`); empty: the token alone' })),
    stringValues: Type.Optional(Type.Boolean({ description: 'true: the hub sends numbers and flags as strings (the gateway reads them per the item spec either way, and counts them)' })),
    login: Type.Optional(loginSchema),
    ...calling,
    defaults: Type.Optional(SettingsSchema),
    operations: Type.Optional(operations)
  }, { additionalProperties: false, title: 'Hub profile', description: 'How a variant of the customs hub addresses, authenticates and answers the operations the gateway calls' })
}

/** The schema a profile file is checked against: each operation of the catalogue with its own parameters. */
export const HubProfileSchema = profileSchema(Type.Object(Object.fromEntries(OPERATIONS.map(op => [op.id, Type.Optional(operationSchema(op))])), {
  additionalProperties: false,
  description: 'Each operation\'s own settings and address, by its name in the catalogue'
}))

/** The same shape with any operation name: what a checked profile is, as a type. */
export const HubProfileShape = profileSchema(Type.Record(Type.String(), OperationEntrySchema))

export type HubProfile = Static<typeof HubProfileShape>
export type ProfileOperation = Static<typeof OperationEntrySchema>
export type ProfileSettings = Static<typeof SettingsSchema>
export type ProfileFailure = Static<typeof FailureSchema>
export type NotFoundAnswer = typeof NOT_FOUND_ANSWERS[number]
