import { pino } from 'pino'
import { systemClock } from '../clock.ts'
import { ConfigError } from '../config/load.ts'
import { resolveConfig, type GatewayConfig } from '../config/resolve.ts'
import { createCredentials } from '../credentials/index.ts'
import { staticCredentials } from '../credentials/static.ts'
import type { Credentials } from '../credentials/types.ts'
import { codeOf } from '../errors.ts'
import { profileProblems } from '../profile/load.ts'
import { resolveProfile, type ProfileInForce } from '../profile/resolve.ts'
import { createMemoryTokenStore } from '../state/memory/token-store.ts'
import { HubCalls } from './calls.ts'
import { parseOptions, USAGE, UsageError } from './options.ts'
import { probeHub } from './probe.ts'
import { differences, proposeProfile } from './propose.ts'
import { members, type LoginSeen } from './provenance.ts'
import { hints, operationReports, table, type ProbeReport } from './report.ts'

/** What one run prints and its exit code: 0 the profile in force fits, 1 drift, 2 not run. */
export interface ProbeOutcome {
  code: 0 | 1 | 2
  stdout: string
  stderr: string
}

function failed (lines: readonly string[]): ProbeOutcome {
  return { code: 2, stdout: '', stderr: lines.map(line => `probe-hub: ${line}\n`).join('') }
}

/** A hub address as it may be printed: no user or password in it. */
function shown (url: string): string {
  const parsed = new URL(url)
  return `${parsed.origin}${parsed.pathname.replace(/\/$/, '')}`
}

/** Where the token comes from: the gateway's own login in login mode, else the static token. */
function credentialsOf (config: GatewayConfig, inForce: ProfileInForce, login: LoginSeen)
  : Credentials {
  if (config.UPSTREAM_CREDENTIALS === 'login') {
    // The gateway's login, with the profile's login section and the account of the settings;
    // its log lines are the gateway's, not the report's.
    return createCredentials(config, inForce, {
      log: pino({ level: 'silent' }),
      tokens: createMemoryTokenStore(),
      clock: systemClock,
      onLogin: outcome => { if (outcome === 'ok') login.logins++ },
      onRefresh: outcome => { if (outcome === 'ok') login.renewals++ }
    })
  }
  const { UPSTREAM_ACCESS_TOKEN: token, UPSTREAM_ACCESS_TOKEN_FILE: file } = config
  return staticCredentials({
    ...(token === undefined ? {} : { token }),
    ...(file === undefined ? {} : { file })
  })
}

/**
 * `npm run probe-hub` without its process: the arguments and the
 * environment in, the output and the exit code out. The settings are the
 * gateway's (its config module and its hub profile in force); the
 * credentials are read from them and never printed.
 */
export async function runProbe (
  argv: readonly string[], env: Readonly<Record<string, string | undefined>>
): Promise<ProbeOutcome> {
  let options
  try {
    options = parseOptions(argv)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    return failed([...error.problems, `usage: ${USAGE}`])
  }
  const baseUrl = options.baseUrl ?? options.hubUrl
  const given = {
    ...env,
    ...(options.hubUrl === undefined ? {} : { UPSTREAM_HUB_URL: options.hubUrl }),
    ...(baseUrl === undefined ? {} : { UPSTREAM_BASE_URL: baseUrl })
  }
  let config, inForce
  try {
    config = resolveConfig(given)
    inForce = resolveProfile(config)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    return failed(error.problems.map(problem => `config error: ${problem}`))
  }
  const hubUrl = shown(config.UPSTREAM_HUB_URL)
  const loginMode = config.UPSTREAM_CREDENTIALS === 'login'
  const login: LoginSeen = { logins: 0, renewals: 0 }
  const credentials = credentialsOf(config, inForce, login)
  const calls = new HubCalls(options)
  let run
  try {
    let token
    try {
      token = await credentials.authorization(undefined)
    } catch (error) {
      const url = inForce.loginAddresses.url
      const at = url === undefined ? '' : ` at ${shown(url)}`
      return failed([`could not log in${at} (${codeOf(error) ?? String(error)}): check ` +
        'UPSTREAM_LOGIN_USERNAME and UPSTREAM_LOGIN_PASSWORD (or their *_FILE) and the ' +
        'profile\'s login section'])
    }
    if (token === '') {
      return failed(['no access token: the probe sends the token of UPSTREAM_ACCESS_TOKEN or ' +
        'UPSTREAM_ACCESS_TOKEN_FILE, or logs in itself with UPSTREAM_CREDENTIALS=login (with ' +
        'forward, set one of them for the probe)'])
    }
    const next = (): Promise<string> => credentials.authorization(undefined)
    run = await probeHub(config, inForce, options, calls, next)
  } finally {
    await calls.close()
    await credentials.close()
  }
  if (run.unreachable !== undefined) {
    return failed([`the hub did not answer at ${hubUrl} (${run.unreachable})`])
  }
  const proposal = proposeProfile(inForce, run.findings, run.baselineErrors, hubUrl)
  const { profile } = proposal
  const problems = profileProblems(profile)
  if (problems.length > 0) {
    const fault = 'the proposed profile does not hold its schema (a fault of the probe):'
    return failed([fault, ...problems])
  }
  const rows = [...proposal.whole, ...differences(inForce.operations, proposal.behaviour, profile)]
  const { operations, differences: all } = operationReports(run.findings, rows, options.discover)
  const report: ProbeReport = {
    hub: { hubUrl, baseUrl: shown(config.UPSTREAM_BASE_URL) },
    configuredProfile: { name: inForce.name, source: inForce.source, digest: inForce.digest },
    calls: run.calls,
    maxCalls: options.maxCalls,
    ...(loginMode ? { login } : {}),
    drift: all.length > 0,
    discovered: options.discover,
    hints: hints(run.unknownPrefixes, proposal.hub, options.discover, options.tryPrefixes),
    operations,
    differences: all,
    members: members(proposal, run.findings, loginMode ? login : undefined),
    profile
  }
  return {
    code: report.drift ? 1 : 0,
    stdout: options.json ? `${JSON.stringify(report, null, 2)}\n` : table(report),
    stderr: ''
  }
}
