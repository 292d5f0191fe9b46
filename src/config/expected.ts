/**
 * What each setting checked by a pattern expects, said for people, with an
 * example: start-up prints `NAME: must be <this>` instead of the schema's
 * regular expression. test/config/config.test.ts fails when a setting of
 * ConfigSchema with a pattern or a format has no line here.
 */
export const EXPECTED: Readonly<Record<string, string>> = {
  UPSTREAM_HUB_URL: 'an http:// or https:// address, such as https://hub.example.go.id',
  UPSTREAM_BASE_URL: 'an http:// or https:// address, such as https://hub.example.go.id',
  TRANSCODE_THREADS: 'a number of threads from 0 to 16, or auto, such as 2',
  RATE_LIMIT_WINDOW:
    'a duration: a whole number and a unit (ms, s, m, h, d, or seconds, minutes, hours, days), ' +
    'such as 1 minute, 30 s or 1h; a number alone is milliseconds',
  CORS_ORIGINS:
    'one or more origins separated by commas, each http:// or https:// with a host and an ' +
    'optional port, and no path or trailing /, such as ' +
    'https://yard.example.co.id,http://localhost:5173',
  REDIS_URL:
    'redis://[user:password@]host[:port][/db], or rediss:// for TLS, with the reserved ' +
    'characters of user and password percent-encoded and nothing after the db number, such as ' +
    'rediss://gateway:s%40cret@redis.internal:6380',
  REDIS_KEY_PREFIX: '1 to 64 of letters, digits and : . _ -, such as cgw: or prod:cgw:',
  REDIS_SENTINELS:
    'one or more host:port (a name, an IPv4 or a bracketed IPv6 address, and a port) separated ' +
    'by commas, such as sentinel-1:26379,sentinel-2:26379,sentinel-3:26379',
  REDIS_SENTINEL_MASTER_NAME:
    '1 to 64 of letters, digits and . _ -, as in `sentinel monitor <name>`, such as mymaster',
  REDIS_SENTINEL_USERNAME: '1 to 128 printable characters without spaces, such as gateway'
}

/** The sentence for a schema error of keyword `keyword` on setting `name`, when there is one. */
export function expectedProblem (name: string, keyword: string): string | undefined {
  const expected = EXPECTED[name]
  return expected !== undefined && (keyword === 'pattern' || keyword === 'format')
    ? `${name}: must be ${expected}`
    : undefined
}
