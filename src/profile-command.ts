// `npm run --silent profile`: the hub profile in force, whole, as JSON on stdout.
// `npm run --silent profile -- --from-env`: the profile that the settings 1.0.0 removed meant
// (profile/from-settings.ts), with what to unset on stderr. Both read the environment and
// `.env`; stdout holds the JSON alone, so that `> hub-profile.json` writes a profile file.
// Not part of the gateway: nothing of it imports this file.
import { parseArgs } from 'node:util'
import { ConfigError, loadEnvFile } from './config/load.ts'
import { removedSettingProblems } from './config/removed-settings.ts'
import { profileFromSettings } from './profile/from-settings.ts'
import { loadProfileFile } from './profile/load.ts'
import { resolveProfile, type ProfileConfig } from './profile/resolve.ts'
import type { HubProfile } from './profile/schema.ts'

const USAGE = `usage: npm run --silent profile [-- --from-env]
  (no option)  print the hub profile in force (UPSTREAM_PROFILE_FILE, or the built-in one), whole
  --from-env   print the profile the removed hub settings of the environment and .env meant,
               and on stderr the settings to unset`

function fail (lines: readonly string[]): never {
  for (const line of lines) process.stderr.write(`${line}\n`)
  process.exit(1)
}

function given (name: string): string | undefined {
  const value = process.env[name]?.trim()
  return value === undefined || value === '' ? undefined : value
}

let flags: { 'from-env'?: boolean, help?: boolean }
try {
  const options = {
    'from-env': { type: 'boolean' },
    help: { type: 'boolean', short: 'h' }
  } as const
  flags = parseArgs({ options }).values
} catch (error) {
  fail([error instanceof Error ? error.message : String(error), USAGE])
}
if (flags.help === true) {
  process.stdout.write(`${USAGE}\n`)
  process.exit(0)
}

loadEnvFile()
const file = given('UPSTREAM_PROFILE_FILE')

try {
  if (flags['from-env'] === true) {
    const base = file === undefined ? undefined : loadProfileFile(file)
    const { profile, unset, notes, problems } = profileFromSettings(process.env, base)
    if (profile === undefined) fail(problems.map(problem => `error: ${problem}`))
    process.stdout.write(`${JSON.stringify(profile, null, 2)}\n`)
    if (unset.length > 0) {
      const names = unset.join(', ')
      process.stderr.write(`unset these settings, which the profile says now: ${names}\n`)
    }
    for (const note of notes) process.stderr.write(`${note}\n`)
    process.stderr.write('then set UPSTREAM_PROFILE_FILE to the file written\n')
  } else {
    const credentials = given('UPSTREAM_CREDENTIALS')
    const config: ProfileConfig = {
      UPSTREAM_PROFILE_FILE: file,
      UPSTREAM_HUB_URL: given('UPSTREAM_HUB_URL'),
      UPSTREAM_BASE_URL: given('UPSTREAM_BASE_URL'),
      UPSTREAM_CREDENTIALS: credentials === 'login' || credentials === 'forward'
        ? credentials
        : 'static'
    }
    // Without a hub the gateway fronts the built-in sandbox, whose profile adds its login.
    let builtIn: HubProfile | undefined
    if (config.UPSTREAM_HUB_URL === undefined && config.UPSTREAM_BASE_URL === undefined) {
      builtIn = (await import('./sandbox/index.ts')).sandboxProfile()
    }
    const profile = resolveProfile(config, builtIn === undefined ? {} : { builtIn })
    process.stdout.write(`${JSON.stringify(profile.document, null, 2)}\n`)
    // What the gateway would refuse to start with, and this profile leaves out.
    for (const problem of removedSettingProblems(process.env)) {
      process.stderr.write(`warning: ${problem}\n`)
    }
  }
} catch (error) {
  if (error instanceof ConfigError) fail(error.problems.map(problem => `config error: ${problem}`))
  throw error
}
