import { readFileSync, statSync } from 'node:fs'

/**
 * Secrets as files, the container convention (Docker and Compose secrets,
 * Kubernetes Secrets mounted as volumes): each setting X of SECRET_SETTINGS
 * may be given as X_FILE, the path of a file that holds its value. The file
 * is read once, at start-up, and its trailing line break dropped; X and X_FILE
 * both set is refused, and so is a file that cannot be read, in one line that
 * names the setting and the path, never the content.
 */

/** The settings whose values are secrets: each may come from X_FILE, none is ever logged. */
export const SECRET_SETTINGS = [
  'UPSTREAM_API_KEY',
  'UPSTREAM_ACCESS_TOKEN',
  'UPSTREAM_LOGIN_USERNAME',
  'UPSTREAM_LOGIN_PASSWORD',
  'REDIS_URL',
  'REDIS_SENTINEL_PASSWORD'
] as const

export type SecretSetting = typeof SECRET_SETTINGS[number]

/** The variables that give a secret as a file: each setting of SECRET_SETTINGS with `_FILE`. */
export const SECRET_FILE_SETTINGS: readonly string[] = SECRET_SETTINGS.map(name => `${name}_FILE`)

/**
 * The secret whose file the gateway itself re-reads while it runs (static
 * credentials: a rotated token is picked up without a restart). Its file is
 * only checked at start-up; its content is not put in the configuration.
 */
const REREAD: ReadonlySet<SecretSetting> = new Set(['UPSTREAM_ACCESS_TOKEN'])

/** Larger than any credential: a file this size is not the one meant (a log, a disk image). */
const MAX_BYTES = 64 * 1024

const REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'a part of the path is not a directory',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the path is too long'
}

function reason (error: unknown): string {
  const code =
    typeof error === 'object' && error !== null && 'code' in error
      ? String(error.code)
      : 'unknown error'
  return REASONS[code] ?? code
}

function isSet (value: string | undefined): value is string {
  return value !== undefined && value.trim() !== ''
}

/** The content of `path` without its trailing line breaks, or why it cannot be used. */
function read (path: string, keep: boolean): { value?: string, problem?: string } {
  try {
    const info = statSync(path)
    if (!info.isFile()) {
      return {
        problem: `${path} is not a ` +
          `file${info.isDirectory() ? ' but a directory (name the file inside it)' : ''}`
      }
    }
    if (info.size > MAX_BYTES) {
      return {
        problem: `${path} is larger than ${MAX_BYTES / 1024} KiB: not a secret of the gateway`
      }
    }
    const text = readFileSync(path, 'utf8')
    if (!keep) return {}
    const value = text.replace(/[\r\n]+$/, '')
    return value.trim() === '' ? { problem: `${path} is empty` } : { value }
  } catch (error) {
    return { problem: `cannot read ${path} (${reason(error)})` }
  }
}

export interface SecretFiles {
  /** The values read from files, by the setting they stand for. */
  values: Partial<Record<SecretSetting, string>>
  /** The settings whose value came from a file: their problems name the file setting too. */
  fromFile: SecretSetting[]
  problems: string[]
}

/** Reads every X_FILE that `env` sets (empty values count as unset, as for every setting). */
export function readSecretFiles (env: Record<string, string | undefined>): SecretFiles {
  const out: SecretFiles = { values: {}, fromFile: [], problems: [] }
  for (const name of SECRET_SETTINGS) {
    const path = env[`${name}_FILE`]
    if (!isSet(path)) continue
    if (isSet(env[name])) {
      out.problems.push(`${name}_FILE: set either it or ${name}, not both`)
      continue
    }
    const { value, problem } = read(path.trim(), !REREAD.has(name))
    if (problem !== undefined) out.problems.push(`${name}_FILE: ${problem}`)
    else if (value !== undefined) {
      out.values[name] = value
      out.fromFile.push(name)
    }
  }
  return out
}

/**
 * A problem about a setting whose value came from its file, said so:
 * `REDIS_URL (from REDIS_URL_FILE): must match …`, so that the operator
 * looks in the file rather than for a variable they never set.
 */
export function fromFileProblem (problem: string, fromFile: readonly SecretSetting[]): string {
  const name = fromFile.find(
    (setting) => problem.startsWith(`${setting}:`) || problem.startsWith(`${setting} `)
  )
  return name === undefined ? problem : `${name} (from ${name}_FILE)${problem.slice(name.length)}`
}
