import { ConfigError } from '../config/load.ts'
import { resolveConfig } from '../config/resolve.ts'
import { staticCredentials } from '../credentials/static.ts'
import { profileProblems } from '../profile/load.ts'
import { resolveProfile } from '../profile/resolve.ts'
import { HubCalls } from './calls.ts'
import { parseOptions, USAGE, UsageError } from './options.ts'
import { probeHub } from './probe.ts'
import { proposeProfile, statusValues } from './propose.ts'
import { isDrift, operationReport, table, type ProbeReport } from './report.ts'

/** What one run prints and its exit code: 0 the profile in force fits, 1 drift, 2 could not run. */
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

/**
 * `npm run probe-hub` without its process: the arguments and the
 * environment in, the output and the exit code out. The settings are the
 * gateway's (its config module and its hub profile in force); the
 * credentials are read from them and never printed.
 */
export async function runProbe (argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<ProbeOutcome> {
  let options
  try {
    options = parseOptions(argv)
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    return failed([...error.problems, `usage: ${USAGE}`])
  }
  const given = {
    ...env,
    ...(options.hubUrl === undefined ? {} : { UPSTREAM_HUB_URL: options.hubUrl }),
    ...(options.baseUrl ?? options.hubUrl) === undefined ? {} : { UPSTREAM_BASE_URL: options.baseUrl ?? options.hubUrl }
  }
  let config, inForce
  try {
    config = resolveConfig(given)
    inForce = resolveProfile(config)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    return failed(error.problems.map(problem => `config error: ${problem}`))
  }
  const credentials = staticCredentials({
    ...(config.UPSTREAM_ACCESS_TOKEN === undefined ? {} : { token: config.UPSTREAM_ACCESS_TOKEN }),
    ...(config.UPSTREAM_ACCESS_TOKEN_FILE === undefined ? {} : { file: config.UPSTREAM_ACCESS_TOKEN_FILE })
  })
  const token = await credentials.authorization(undefined)
  await credentials.close()
  if (token === '') {
    return failed(['no access token: the probe sends the token of UPSTREAM_ACCESS_TOKEN or UPSTREAM_ACCESS_TOKEN_FILE (with UPSTREAM_CREDENTIALS=login or forward, set one of them for the probe)'])
  }
  const calls = new HubCalls(options)
  let run
  try {
    run = await probeHub(config, inForce, options, calls, token)
  } finally {
    await calls.close()
  }
  const hubUrl = shown(config.UPSTREAM_HUB_URL)
  if (run.unreachable !== undefined) return failed([`the hub did not answer at ${hubUrl} (${run.unreachable})`])
  const { profile, stringValues } = proposeProfile(inForce, run.findings, hubUrl)
  const problems = profileProblems(profile)
  if (problems.length > 0) return failed(['the proposed profile does not hold its schema (a fault of the probe):', ...problems])
  const successValues = statusValues(run.findings)
  const operations = run.findings.map(finding => operationReport(finding, successValues))
  const whole = stringValues === undefined ? [] : [stringValues]
  const report: ProbeReport = {
    hub: { hubUrl, baseUrl: shown(config.UPSTREAM_BASE_URL) },
    configuredProfile: { name: inForce.name, source: inForce.source, digest: inForce.digest },
    calls: run.calls,
    maxCalls: options.maxCalls,
    drift: isDrift(operations, whole),
    discovered: options.discover,
    operations,
    differences: whole,
    profile
  }
  return {
    code: report.drift ? 1 : 0,
    stdout: options.json ? `${JSON.stringify(report, null, 2)}\n` : table(report),
    stderr: ''
  }
}
