import leven from 'leven'
import { removedSetting } from './removed-settings.ts'
import { ConfigSchema } from './schema.ts'
import { SECRET_FILE_SETTINGS } from './secret-files.ts'

/**
 * Environment variables that look like a setting of the gateway but are
 * none (a typo is otherwise silent), the setting each may have meant, and
 * the typos that stop start-up in production.
 */

/** The settings, and the files that may give the secret ones (X_FILE). */
const NAMES: readonly string[] = [...Object.keys(ConfigSchema.properties), ...SECRET_FILE_SETTINGS]

/**
 * The prefixes of the gateway's settings, from ConfigSchema's own names (the
 * part up to the first `_`: UPSTREAM_, CACHE_, BREAKER_, ...), so that a new
 * setting brings its prefix along.
 */
export const SETTING_PREFIXES: readonly string[] = [
  ...new Set(
    NAMES.filter((name) => name.includes('_')).map((name) => name.slice(0, name.indexOf('_') + 1))
  )
].sort()

/**
 * A name without its case and underscores: `UPSTREAM_HUBURL` and `upstream_hub_url` are
 * UPSTREAMHUBURL.
 */
function folded (name: string): string {
  return name.toUpperCase().replaceAll('_', '')
}

/**
 * Units a setting's name ends with, which a writer may leave out (CACHE_TTL for CACHE_TTL_SECONDS).
 */
const UNIT = /_(MS|SECONDS|BYTES)$/

/**
 * Each setting with the folded forms a variable is compared with: its name, and its name without
 * the unit.
 */
const FORMS: ReadonlyArray<{ setting: string; forms: string[] }> = NAMES.map((setting) => ({
  setting,
  forms: UNIT.test(setting)
    ? [folded(setting), folded(setting.replace(UNIT, ''))]
    : [folded(setting)]
}))

/**
 * How many edits (Levenshtein, over folded names) still count as close: one,
 * or two from ten letters on; so REDIS_UR, CORS_ORIGIN and UPSTREAM_HUB_ULR
 * are caught, and short names do not match everything.
 */
function tolerance (form: string): number {
  return form.length >= 10 ? 2 : 1
}

/** The fewest edits from `written` to one of `forms`, when within that form's tolerance. */
function distance (written: string, forms: readonly string[]): number | undefined {
  let nearest: number | undefined
  for (const form of forms) {
    const limit = tolerance(form)
    const edits = leven(written, form, { maxDistance: limit + 1 })
    if (edits <= limit && (nearest === undefined || edits < nearest)) nearest = edits
  }
  return nearest
}

/** The one setting `name` is close to: the nearest, when no other is as near. */
export function closestSetting (name: string): string | undefined {
  const written = folded(name)
  let best: { setting: string, edits: number } | undefined
  let tie = false
  for (const { setting, forms } of FORMS) {
    const edits = distance(written, forms)
    if (edits === undefined) continue
    if (best === undefined || edits < best.edits) {
      best = { setting, edits }
      tie = false
    } else if (edits === best.edits) {
      tie = true
    }
  }
  return best === undefined || tie ? undefined : best.setting
}

/**
 * Without a gateway prefix a variable counts only when it is this long and
 * close to a setting (CLIENT_FILE): short names such as HOSTS or PORTS are
 * too often someone else's.
 */
const UNPREFIXED_MIN_LENGTH = 8

/**
 * Environment variables that carry one of the gateway's prefixes (in any
 * case), or are close to a setting, but name none of its settings: typos
 * such as `UPSTREAM_HUBURL` or `REDIS_UR`. Each with the setting it may have meant.
 */
export function unknownSettings (
  env: Record<string, string | undefined>
): Array<{ name: string; meant?: string }> {
  const known = new Set<string>(NAMES)
  const found: Array<{ name: string; meant?: string }> = []
  for (const name of Object.keys(env).sort()) {
    // A removed setting is refused by name (config/removed-settings.ts), not guessed at.
    if (known.has(name) || removedSetting(name) !== undefined) continue
    const prefixed = SETTING_PREFIXES.some((prefix) => name.toUpperCase().startsWith(prefix))
    if (!prefixed && folded(name).length < UNPREFIXED_MIN_LENGTH) continue
    const meant = closestSetting(name)
    if (meant !== undefined) found.push({ name, meant })
    else if (prefixed) found.push({ name })
  }
  return found
}

/**
 * Settings whose typo must not let a production process start: without
 * REDIS_URL, its Sentinels, or with another REDIS_KEY_PREFIX than its
 * siblings, a replica keeps its own state and the idempotency promise no
 * longer holds across replicas; without CLIENTS_FILE or a hub setting it
 * would serve otherwise than configured.
 */
const GUARDED = new Set([
  'REDIS_URL',
  'REDIS_KEY_PREFIX',
  'REDIS_SENTINELS',
  'REDIS_SENTINEL_MASTER_NAME',
  'CLIENTS_FILE'
])
function guarded (setting: string): boolean {
  return GUARDED.has(setting) || setting.startsWith('UPSTREAM_')
}

/** With NODE_ENV=production: one problem per variable close to a guarded setting. */
export function misspeltSettingProblems (env: Record<string, string | undefined>): string[] {
  if (env.NODE_ENV !== 'production') return []
  return unknownSettings(env)
    .filter(({ meant }) => meant !== undefined && guarded(meant))
    .map(
      ({ name, meant }) =>
        `${name}: is no setting; did you mean ${meant}? With NODE_ENV=production a misspelt ` +
        'setting of the shared state (REDIS_URL, REDIS_KEY_PREFIX, REDIS_SENTINELS), of the ' +
        'callers (CLIENTS_FILE) or of the hub (UPSTREAM_*) stops start-up rather than run ' +
        `without it: rename or remove ${name}`
    )
}
