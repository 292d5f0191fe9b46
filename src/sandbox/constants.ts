// Credentials and identifiers the sandbox hub accepts out of the box. They are
// public on purpose: the sandbox only ever runs on a developer machine or in CI.
export const SANDBOX_API_KEY = 'sbx-api-key-5f2c9e71d4'
export const SANDBOX_ACCESS_TOKEN = 'sbx-access-token-a81b3c6d0e'
export const SANDBOX_PLATFORM_ID = 'PLTSBX01'

export const DEFAULT_HOST = '127.0.0.1'
export const DEFAULT_API_KEY_HEADER = 'customs-api-key'
export const DEFAULT_PATH_SEGMENT = 'HUB'
export const DEFAULT_SLOW_MS = 3000
/** Requests kept in the record (the newest); counts cover every request. */
export const DEFAULT_RECORD_LIMIT = 1000
