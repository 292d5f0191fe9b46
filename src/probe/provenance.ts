import type { HubOperation } from '../catalogue/types.ts'
import { observed, RANK, type Finding } from './probe.ts'
import type { Proposal } from './propose.ts'

/**
 * Which members of the proposed profile rest on what the hub answered, and
 * which are the profile in force's, taken on trust: a member is observed
 * when an operation the probe reached used it and the hub took or showed
 * it; the writes are never called, and what the probe never saw (a token's
 * scheme outside login mode, where a login answer keeps the token's
 * lifetime) stays as the profile in force says.
 */

/** What the probe's own login did (login mode). */
export interface LoginSeen {
  logins: number
  renewals: number
}

export interface Members {
  observed: string[]
  onTrust: string[]
}

function isList (op: HubOperation): boolean {
  return op.response.type !== 'record'
}

export function members (
  proposal: Proposal, findings: readonly Finding[], login: LoginSeen | undefined
): Members {
  const { profile } = proposal
  const observedSet = new Set<string>()
  const all: string[] = []
  const note = (member: string, seen: boolean): void => {
    all.push(member)
    if (seen) observedSet.add(member)
  }
  const reached = findings.filter(f => f.best !== undefined && f.best.rank >= RANK.empty)
  const withData = reached.filter(f => f.best!.rank >= RANK.data)
  const own = (f: Finding, name: string): boolean => {
    const entry = profile.operations?.[f.op.id] as Record<string, unknown> | undefined
    return entry?.[name] !== undefined
  }
  /** Reached operations that take `name` from the defaults. */
  const byDefault = (name: string): Finding[] => reached.filter(f => !own(f, name))
  const tokenAccepted = reached.some(f => f.best!.variant.credentials.token)

  note('tokenScheme', login !== undefined && login.logins > 0 && tokenAccepted)
  note('stringValues', withData.length > 0)
  // What a login shows: where it is and where its answer keeps the token; a renewal, where it
  // is and where the refresh token is. Nothing shows where the lifetime is (it has a default).
  const loggedIn = login !== undefined && login.logins > 0
  const renewed = login !== undefined && login.renewals > 0
  const shownBy: Record<string, boolean> = {
    path: loggedIn, tokenField: loggedIn, refreshPath: renewed, refreshTokenField: renewed
  }
  for (const name of Object.keys(profile.login ?? {})) note(`login.${name}`, shownBy[name] ?? false)
  for (const area of Object.keys(profile.prefixes ?? {})) {
    note(`prefixes.${area}`, byDefault('prefix').some(f => f.op.area === area))
  }
  const defaults = profile.defaults ?? {}
  const errorsSeen = proposal.hub.errorFields !== undefined
  for (const name of Object.keys(defaults)) {
    const users = byDefault(name)
    const seen: Record<string, () => boolean> = {
      apiKeyHeader: () => users.some(f => f.best!.variant.credentials.apiKey),
      tokenHeader: () => users.some(f => f.best!.variant.credentials.token),
      dateSent: () => users.some(f =>
        f.best!.rank >= RANK.data && f.best!.variant.params.some(p => p.kind === 'blDate')),
      dateAnswered: () => users.some(f => observed(f).dateForms.length > 0),
      errorFields: () => errorsSeen,
      nullStrings: () => users.some(f => f.best!.rank >= RANK.data),
      answerKey: () => users.some(f => isList(f.op) && f.best!.located !== undefined),
      failure: () => proposal.hub.failure !== undefined &&
        defaults.failure?.statusField === proposal.hub.failure.field
    }
    note(`defaults.${name}`, seen[name]?.() ?? false)
  }
  for (const id of proposal.behaviour.keys()) {
    const finding = findings.find(f => f.op.id === id)
    let why = ''
    if (finding === undefined) why = ' (a write: never called)'
    else if (!reached.includes(finding)) {
      why = finding.skipped === undefined ? ' (not reached)' : ' (not called)'
    }
    note(`operations.${id}${why}`, why === '')
  }
  return {
    observed: all.filter(m => observedSet.has(m)),
    onTrust: all.filter(m => !observedSet.has(m))
  }
}
