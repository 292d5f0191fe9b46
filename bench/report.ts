// The markdown report: targets, CPU per request, medians, every run, machine and command.
import type { LoadResult } from './load.ts'
import type { BenchOptions, CaseName, ModeName } from './options.ts'
import type { ProfileSummary } from './profile.ts'
import type { TranscoderSpeed } from './transcode-speed.ts'
import type { RedisActivity } from './redis.ts'
import { UNCACHED_REFERENCES, type ReferenceMode } from './shared.ts'
import type { ContainerSetup } from './container.ts'

export interface Measurement extends LoadResult {
  /** Peak RSS of the measured process during the run, MB (Linux only). */
  peakRssMb: number | undefined
  /** What the process logged at warn level or above during the run. */
  logged?: string
  /** CPU seconds the measured process used during the run (utime + stime, all threads). */
  cpuSeconds: number | undefined
  /** `cpuSeconds` per answered (2xx) request, µs. */
  usPerRequest: number | undefined
  /** Cores the measured process used on average. */
  targetCores: number | undefined
  /** Cores the load side (the runner with autocannon, the upstream, Redis) used on average. */
  loadCores: number | undefined
  /** Cores used meanwhile by processes outside the bench (noise on a shared machine). */
  otherCores: number | undefined
  /** Requests a gateway shed with 503 OVERLOADED during the run, when any. */
  overloaded?: number
}

export type PairKind = ModeName | 'latency'

export interface Pair {
  round: number
  caseName: CaseName
  kind: PairKind
  connections: number
  order: 'raw first' | 'gateway first'
  raw: Measurement
  gateway: Measurement
  /** Gateway req/s over raw-proxy req/s. */
  ratio: number
  /** Gateway CPU per request over the raw proxy's (NaN when not measurable). */
  cpuRatio: number
  /** Gateway p99 minus raw-proxy p99, ms. */
  p99Added: number
  /** The reference servers measured right after the pair. */
  references?: Array<{ mode: ReferenceMode, m: Measurement }>
  /** The container gateway, measured after them (uncached BL and SP2-500 pairs). */
  container?: Measurement
}

export interface CaseInfo {
  name: CaseName
  label: string
  /** Upstream body, bytes. */
  upstreamBytes: number
  /** Gateway response body, bytes (uncached). */
  gatewayBytes: number
  items: number
  gatewayPath: string
  rawPath: string
}

export interface CacheStatus {
  /** The cached gateway answered `meta.cached: true` on a repeated request. */
  available: boolean
  detail: string
}

export interface Machine {
  cpu: string
  cpus: number
  memoryGb: number
  os: string
  node: string
  loadAverage: number[]
}

export interface PinningReport {
  pinned: boolean
  /** Where the server under test and the load side run, or why nothing is pinned. */
  text: string
  /** `Cpus_allowed_list` of each process as the kernel reported it. */
  seen: Array<{ name: string, cpus: string }>
}

export interface RedisReport {
  version: string
  /** REDIS_URL of each gateway, as read back from its environment. */
  urls: Record<string, string>
  /** What the gateways did with it; undefined when it could not be read. */
  activity: RedisActivity | undefined
}

export interface ReportInput {
  options: BenchOptions
  command: string
  date: Date
  machine: Machine
  cases: CaseInfo[]
  cache: CacheStatus | undefined
  pairs: Pair[]
  /** VmHWM at the end, MB, by process. */
  lifetimePeaks: Record<string, number | undefined>
  profile: { summary: ProfileSummary, rps: number, caseLabel: string } | undefined
  gatewayEntry: string
  blSynthesized: number
  /** Set when the build reported errors but emitted. */
  buildWarning: string | undefined
  /** Commit and working-tree state of src/. */
  gatewayCode: string
  pinning: PinningReport
  /** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`). */
  clockTicks: number
  /** `--redis`: the server the gateways were given. */
  redis: RedisReport | undefined
  /**
   * The transcoder alone, in the bench's process (bench/transcode-speed.ts); undefined when not
   * measured.
   */
  transcoder?: TranscoderSpeed[] | undefined
  /** How the container case ran the gateway; undefined when it did not run. */
  container?: ContainerSetup
}

export interface TargetResult {
  /** The case, as the targets table words it. */
  case: string
  measure: string
  measured: string
  goal: string
  result: 'pass' | 'FAIL' | 'n/a'
  /** For a failing row: what the minimal reference servers cost for the same work. */
  floor?: string
  note?: string
}

export function median (values: number[]): number {
  const v = values.filter(Number.isFinite).sort((a, b) => a - b)
  if (v.length === 0) return Number.NaN
  const mid = v.length >> 1
  return v.length % 2 === 1 ? v[mid] as number : ((v[mid - 1] as number) + (v[mid] as number)) / 2
}

const int = (n: number | undefined): string =>
  n === undefined || !Number.isFinite(n) ? '–' : Math.round(n).toLocaleString('en-US')

/** How long each measured run is: seconds, or a number of requests (`--requests`). */
export function runLength (options: Pick<BenchOptions, 'duration' | 'requests'>): string {
  return options.requests > 0 ? `${int(options.requests)} requests` : `${options.duration} s`
}
const ms = (n: number): string => Number.isFinite(n) ? n.toFixed(1) : '–'
const ratio = (n: number): string => Number.isFinite(n) ? n.toFixed(2) : '–'
/**
 * A ratio against its goal: with three decimals where two would hide on which side of the goal it
 * is.
 */
const ratioAgainst = (n: number, goal: number): string =>
  Number.isFinite(n) && n.toFixed(2) === goal.toFixed(2) && n !== goal ? n.toFixed(3) : ratio(n)
const signedMs = (n: number): string =>
  Number.isFinite(n) ? `${n >= 0 ? '+' : ''}${n.toFixed(1)}` : '–'
const cores = (n: number | undefined): string =>
  n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(2)
const mb = (n: number | undefined): string =>
  n === undefined || !Number.isFinite(n) ? '–' : `${Math.round(n)} MB`
const us = (n: number | undefined): string =>
  n === undefined || !Number.isFinite(n) ? '–' : `${int(n)} µs`
const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`

function bytes (n: number): string {
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(2)} MB`
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KB`
  return `${n} B`
}

/** CPU per request of `a` over `b`'s; NaN when either was not measurable. */
export function cpuRatioOf (a: Measurement, b: Measurement): number {
  return a.usPerRequest !== undefined && b.usPerRequest !== undefined && b.usPerRequest > 0
    ? a.usPerRequest / b.usPerRequest
    : Number.NaN
}

/** Problems of one run: non-2xx answers, socket errors, timeouts. */
export function problemsOf (m: Measurement): string | undefined {
  const parts: string[] = []
  if (m.non2xx > 0) {
    const codes = Object.entries(m.statuses)
      .filter(([code]) => !code.startsWith('2'))
      .map(([code, n]) => `${n}×${code}`)
    parts.push(`${m.non2xx} non-2xx${codes.length > 0 ? ` (${codes.join(', ')})` : ''}`)
  }
  if (m.errors > 0) parts.push(`${m.errors} errors`)
  if (m.timeouts > 0) parts.push(`${m.timeouts} timeouts`)
  if (m.ok === 0) parts.push('no 2xx response')
  return parts.length > 0 ? parts.join(', ') : undefined
}

function pairProblems (p: Pair): string {
  const raw = problemsOf(p.raw)
  const gw = problemsOf(p.gateway)
  return [raw !== undefined ? `⚠ raw: ${raw}` : '', gw !== undefined ? `⚠ gateway: ${gw}` : '']
    .filter((s) => s !== '')
    .join('; ')
}

/** Above this, a pinned load side may have held the run back rather than the server under test. */
const LOAD_SIDE_BUSY = 0.9

/**
 * Problems, a busy load side, and what the gateway logged at warn level (e.g. load shedding), for
 * the table.
 */
function pairNotes (p: Pair, pinned: boolean): string {
  const busy = [p.raw, p.gateway].some((m) => pinned && (m.loadCores ?? 0) > LOAD_SIDE_BUSY)
    ? `load side busy (${cores(p.raw.loadCores)} / ${cores(p.gateway.loadCores)} cores): the ` +
      'load generator may have held this pair back'
    : ''
  const notes = [
    pairProblems(p),
    busy,
    p.gateway.logged !== undefined ? `gateway logged ${p.gateway.logged}` : ''
  ].filter((s) => s !== '')
  return notes.length > 0 ? notes.join('; ').replaceAll('|', '\\|') : 'none'
}

/** The CPU targets against the hand-written peer: at most this share of its CPU per request. */
const HAND_WRITTEN_TARGETS: Array<{ caseName: CaseName, label: string, goal: number }> = [
  { caseName: 'bl', label: 'BL list, uncached', goal: 1.0 },
  { caseName: 'sp2-20', label: 'SP2 list, 20 documents, uncached', goal: 0.5 },
  { caseName: 'sp2-500', label: 'SP2 list, 500 documents, uncached', goal: 0.5 }
]
const P99_ADDED_GOAL_MS = 5
/** In the container, CPU per request at most this times the unconstrained gateway's. */
const CONTAINER_CPU_GOAL = 1.2
/** Room to spare under the shed line: a peak RSS at most this share of it. */
const SHED_LINE_SHARE = 0.9
const CONTAINER_LABELS: Partial<Record<CaseName, string>> = {
  bl: 'BL list',
  'sp2-500': 'SP2 list, 500 documents'
}

const referenceOf = (p: Pair, mode: ReferenceMode): Measurement | undefined =>
  p.references?.find(r => r.mode === mode)?.m

/**
 * The hand-written peer's measurement for a pair: the one right after it, or
 * for a cached pair (the peer keeps no cache, so every request costs it the
 * same) the one after the uncached pair of the same case and round.
 */
function handWrittenOf (p: Pair, pairs: Pair[]): Measurement | undefined {
  if (p.kind !== 'cached') return referenceOf(p, 'hand-written')
  const uncached = pairs.find(q => q.kind === 'uncached' && q.caseName === p.caseName &&
    q.round === p.round)
  return uncached === undefined ? undefined : referenceOf(uncached, 'hand-written')
}

const mib = (n: number | undefined): string =>
  n === undefined || !Number.isFinite(n) ? '–' : `${Math.round(n)} MiB`

/**
 * The gateway's settings that differ from the default configuration beyond what the bench must set.
 */
export function gatewayOverrides ({
  options,
  redis
}: Pick<ReportInput, 'options' | 'redis'>): string[] {
  return [
    ...(options.sameUrl ? ['CACHE_TTL_SECONDS=0'] : []),
    ...(redis !== undefined ? ['REDIS_URL'] : []),
    ...Object.entries(options.gatewayEnv).map(([k, v]) => `${k}=${v}`)
  ]
}

/** How this run departs from the conditions the targets are stated for. */
export function departures ({
  options,
  pinning
}: Pick<ReportInput, 'options' | 'pinning'>): string[] {
  const out: string[] = []
  if (!pinning.pinned) out.push(pinning.text)
  if (options.rounds < 3) {
    out.push(`${plural(options.rounds, 'round')} (a median needs three ` +
    'or more)')
  }
  if (options.connections !== 100) out.push(`${options.connections} connections, not 100`)
  if (options.p99Connections !== 10) {
    out.push(`the latency case at ${options.p99Connections} ` +
    'connections, not 10')
  }
  if (options.latency !== 20 || options.jitter !== 5) {
    out.push(`a ${options.latency} ± ` +
    `${options.jitter} ms hub, not 20 ± 5 ms`)
  }
  if (options.sameUrl) out.push('`--same-url`: uncached runs repeat one URL')
  return out
}

export function evaluateTargets (input: ReportInput): TargetResult[] {
  const { pairs, options } = input
  const of = (caseName: CaseName, kind: PairKind): Pair[] =>
    pairs.filter(p => p.caseName === caseName && p.kind === kind)
  const ran = (caseName: CaseName): boolean => input.cases.some(c => c.name === caseName)
  const flagged = (list: Pair[], unit = 'round'): string | undefined => {
    const bad = list.filter(p => pairProblems(p) !== '')
    if (bad.length === 0) return undefined
    const statuses = new Set<string>()
    for (const p of bad) {
      for (const m of [p.raw, p.gateway]) {
        for (const code of Object.keys(m.statuses)) if (!code.startsWith('2')) statuses.add(code)
      }
    }
    const what = statuses.size > 0 ? `non-2xx answers (${[...statuses].join(', ')})` : 'errors'
    return `${bad.length} of ${plural(list.length, unit)} had ${what}, which a pass does not ` +
      'allow; see "Every run"'
  }
  /**
   * The references' median of `value` over `list`, one `server value` part each; undefined when
   * none was measured.
   */
  const floorOf = (
    list: Pair[], modes: readonly ReferenceMode[],
    value: (p: Pair, r: Measurement) => number, format: (n: number) => string
  ): string | undefined => {
    const parts = modes.flatMap((mode) => {
      const measured = list.flatMap(p => {
        const r = referenceOf(p, mode)
        return r === undefined ? [] : [{ p, r }]
      })
      if (measured.length === 0) return []
      const warn = measured.some(({ r }) => problemsOf(r) !== undefined) ? ' ⚠' : ''
      return [`\`${mode}\` ${format(median(measured.map(({ p, r }) => value(p, r))))}${warn}`]
    })
    return parts.length > 0 ? parts.join(', ') : undefined
  }
  const noFloor = options.references
    ? 'no reference server measured'
    : 'not measured (`--no-references`)'
  const verdict = (pass: boolean, note: string | undefined): TargetResult['result'] =>
    pass && note === undefined ? 'pass' : 'FAIL'
  // The CPU ratios are stated for a server with a core of its own: unpinned, the load
  // generator's work lands on the servers' cores and evens them out, so they are shown, not judged.
  const unpinned = input.pinning.pinned
    ? undefined
    : "not pinned, so not judged: the load generator shared the servers' CPUs"
  const cpuVerdict = (pass: boolean, note: string | undefined): TargetResult['result'] =>
    unpinned !== undefined ? 'n/a' : verdict(pass, note)
  const withUnpinned = (note: string | undefined): { note?: string } => {
    const notes = [unpinned, note].filter((n): n is string => n !== undefined)
    return notes.length > 0 ? { note: notes.join('; ') } : {}
  }
  const out: TargetResult[] = []

  for (const { caseName, label, goal } of HAND_WRITTEN_TARGETS) {
    const measure = 'gateway CPU per request ÷ hand-written peer’s'
    const row = { case: label, measure, goal: `≤ ${goal.toFixed(1)}` }
    const list = of(caseName, 'uncached')
    const withPeer = list.flatMap(p => {
      const peer = referenceOf(p, 'hand-written')
      return peer === undefined ? [] : [{ p, peer }]
    })
    const m = median(withPeer.map(({ p, peer }) => cpuRatioOf(p.gateway, peer)))
    if (list.length === 0) out.push({ ...row, measured: 'not run', result: 'n/a' })
    else if (withPeer.length === 0) out.push({ ...row, measured: noFloor, result: 'n/a' })
    else if (!Number.isFinite(m)) {
      out.push({
        ...row,
        measured: 'not measurable here (no ' +
      '/proc)',
        result: 'n/a'
      })
    } else {
      const peerProblems = withPeer.some(({ peer }) => problemsOf(peer) !== undefined)
      const peerNote = 'the hand-written peer had non-2xx answers or errors; see its table'
      const note = flagged(withPeer.map(({ p }) => p)) ?? (peerProblems ? peerNote : undefined)
      const result = cpuVerdict(m <= goal, note)
      const gatewayUs = us(median(withPeer.map(({ p }) => p.gateway.usPerRequest ?? Number.NaN)))
      const peerUs = us(median(withPeer.map(({ peer }) => peer.usPerRequest ?? Number.NaN)))
      // Below the peer: servers that do less of its work (no renaming, no parsing).
      const floor = floorOf(
        withPeer.map(({ p }) => p),
        ['buffer', 'parse'],
        (p, r) => cpuRatioOf(r, referenceOf(p, 'hand-written') as Measurement),
        ratio
      )
      out.push({
        ...row,
        measured:
          `${ratioAgainst(m, goal)} (${gatewayUs} against ${peerUs}; ` +
          `median of ${plural(withPeer.length, 'round')})`,
        result,
        ...(result === 'FAIL' ? { floor: floor ?? noFloor } : {}),
        ...withUnpinned(note)
      })
    }
  }

  {
    const latency = pairs.filter(p => p.kind === 'latency')
    const row = {
      case: `SP2 list, 20 documents, ${options.p99Connections} connections`,
      measure: 'p99 added over the raw proxy',
      goal: `≤ ${P99_ADDED_GOAL_MS} ms`
    }
    if (latency.length === 0) out.push({ ...row, measured: 'not run', result: 'n/a' })
    else {
      const m = median(latency.map(p => p.p99Added))
      const note = flagged(latency)
      const result = verdict(m <= P99_ADDED_GOAL_MS, note)
      out.push({
        ...row,
        measured: `${signedMs(m)} ms (median of ${plural(latency.length, 'round')})`,
        result,
        ...(result === 'FAIL'
          ? {
              floor:
                floorOf(
                  latency,
                  UNCACHED_REFERENCES,
                  (p, r) => r.p99 - p.raw.p99,
                  (n) => `${signedMs(n)} ms`
                ) ?? noFloor
            }
          : {}),
        ...(note !== undefined ? { note } : {})
      })
    }
  }

  out.push(...containerTargets(input, of, ran, cpuVerdict, withUnpinned))
  return out
}

/**
 * The container case's rows: no load shed, peak RSS with room to spare under
 * the shed line, CPU per request near the unconstrained gateway's.
 */
function containerTargets (
  input: ReportInput,
  of: (caseName: CaseName, kind: PairKind) => Pair[],
  ran: (caseName: CaseName) => boolean,
  cpuVerdict: (pass: boolean, note: string | undefined) => TargetResult['result'],
  withUnpinned: (note: string | undefined) => { note?: string }
): TargetResult[] {
  const out: TargetResult[] = []
  const shedLine = input.container?.shedLineMb
  for (const [caseName, label] of Object.entries(CONTAINER_LABELS) as Array<[CaseName, string]>) {
    const rowCase = `in the container, ${label}, ${input.options.connections} connections`
    const rows = {
      shed: { case: rowCase, measure: '503 OVERLOADED answers (load shed)', goal: 'none' },
      rss: {
        case: rowCase,
        measure: 'peak RSS, against the shed line (`PRESSURE_MAX_RSS_BYTES`)',
        goal: shedLine === undefined
          ? `≤ ${SHED_LINE_SHARE * 100} % of the shed line`
          : `≤ ${mib(shedLine * SHED_LINE_SHARE)} (${SHED_LINE_SHARE * 100} % of ${mib(shedLine)})`
      },
      cpu: {
        case: rowCase,
        measure: 'CPU per request ÷ the unconstrained gateway’s',
        goal: `≤ ${CONTAINER_CPU_GOAL}`
      }
    }
    const list = of(caseName, 'uncached').filter(p => p.container !== undefined)
    const runs = list.map(p => ({ p, m: p.container as Measurement }))
    if (runs.length === 0) {
      const why = !ran(caseName) || of(caseName, 'uncached').length === 0
        ? 'not run'
        : input.options.container ? 'not measured' : 'not run (`--no-container`)'
      for (const row of Object.values(rows)) out.push({ ...row, measured: why, result: 'n/a' })
      continue
    }
    const bad = runs.filter(({ m }) => problemsOf(m) !== undefined)
    const first = bad[0] === undefined ? undefined : problemsOf(bad[0].m)
    const note = first !== undefined
      ? `${bad.length} of ${plural(runs.length, 'run')} had ${first}; see "In the container"`
      : undefined
    const shed = runs.reduce((sum, { m }) => sum + (m.overloaded ?? 0), 0)
    out.push({
      ...rows.shed,
      measured: `${shed} (${plural(runs.length, 'run')})`,
      result: shed === 0 && note === undefined ? 'pass' : 'FAIL',
      ...(note !== undefined ? { note } : {})
    })
    const peaks = runs.map(({ m }) => m.peakRssMb).filter((n): n is number => n !== undefined)
    const noProc = 'not measurable here (no /proc)'
    if (peaks.length === 0) out.push({ ...rows.rss, measured: noProc, result: 'n/a' })
    else if (shedLine === undefined) {
      const note = 'the ConfigMap sets no PRESSURE_MAX_RSS_BYTES'
      out.push({ ...rows.rss, measured: mib(Math.max(...peaks)), result: 'n/a', note })
    } else {
      const peak = Math.max(...peaks)
      out.push({
        ...rows.rss,
        measured: `${mib(peak)}, ${Math.round(peak / shedLine * 100)} % of the shed line ` +
          `(highest of ${plural(peaks.length, 'run')})`,
        result: peak <= shedLine * SHED_LINE_SHARE ? 'pass' : 'FAIL'
      })
    }
    const m = median(runs.map(({ p, m }) => cpuRatioOf(m, p.gateway)))
    if (!Number.isFinite(m)) out.push({ ...rows.cpu, measured: noProc, result: 'n/a' })
    else {
      const containerUs = us(median(runs.map(({ m }) => m.usPerRequest ?? Number.NaN)))
      const gatewayUs = us(median(runs.map(({ p }) => p.gateway.usPerRequest ?? Number.NaN)))
      out.push({
        ...rows.cpu,
        measured: `${ratioAgainst(m, CONTAINER_CPU_GOAL)} (${containerUs} against ` +
          `${gatewayUs}; median of ${plural(runs.length, 'round')})`,
        result: cpuVerdict(m <= CONTAINER_CPU_GOAL, note),
        ...withUnpinned(note)
      })
    }
  }
  return out
}

function kindLabel (kind: PairKind, cache: CacheStatus | undefined): string {
  if (kind === 'cached') {
    return cache?.available === true
      ? 'cached'
      : 'cached (cache not ' +
    'available)'
  }
  return kind === 'latency' ? 'uncached' : kind
}

function redisLine (redis: RedisReport): string {
  const urls = Object.entries(redis.urls).map(([name, url]) => `${name} \`${url}\``).join(', ')
  const head = `Redis: redis-server ${redis.version} on loopback, on the load side's CPU, ` +
    `persistence off; REDIS_URL ${urls}`
  const a = redis.activity
  if (a === undefined) return `${head}; what the gateways did with it could not be read`
  if (a.connections === 0) {
    return `${head}; **the gateways never connected to it**: this ` +
    'gateway does not read REDIS_URL, so the run measured its in-process stores'
  }
  return `${head}; the gateways opened ${plural(a.connections, 'connection')} and sent ` +
    `${a.commands.toLocaleString('en-US')} commands`
}

export function renderReport (input: ReportInput): string {
  const { options, machine, cases, cache, pairs } = input
  const targets = evaluateTargets(input)
  const lines: string[] = []
  const push = (...l: string[]): void => { lines.push(...l) }
  const overrides = gatewayOverrides(input)

  push('# Benchmarks', '')
  push('Generated by `bench/run.ts`; do not edit by hand, run the command again.', '')
  push(`- **Command:** \`${input.command}\``)
  push(`- **Date:** ${input.date.toISOString()}`)
  push(
    `- **Machine:** ${machine.cpu} × ${machine.cpus}, ${machine.memoryGb.toFixed(1)} GB RAM, ` +
    `${machine.os}; load average at start ` +
    `${machine.loadAverage.map((n) => n.toFixed(2)).join(' / ')}`
  )
  push(`- **Node:** ${machine.node}`)
  push(
    `- **Gateway code:** ${input.gatewayCode}, run from \`${input.gatewayEntry}\`${
      Object.keys(options.gatewayEnv).length > 0
        ? ` with ${Object.entries(options.gatewayEnv)
            .map(([k, v]) => `\`${k}=${v}\``)
            .join(', ')}`
        : ''
    }`
  )
  const seen = input.pinning.seen.map((s) => `${s.name} ${s.cpus}`).join(', ')
  push(
    `- **Pinning:** ${input.pinning.text}` +
      (input.pinning.seen.length > 0 ? `; \`Cpus_allowed_list\` as read: ${seen}` : '')
  )
  push(
    '- **Mode:** ' + (input.redis !== undefined
      ? redisLine(input.redis)
      : 'memory: the gateways keep their state in process (no REDIS_URL)')
  )
  push(
    '- **CPU time:** utime + stime of each server\'s `/proc/<pid>/stat` (all its threads), in ' +
    `ticks of 1/${input.clockTicks} s (\`getconf CLK_TCK\`), read after the warm-up at the start ` +
    'and at the end of each measured run and divided by the run\'s 2xx answers'
  )
  const overridden = overrides.map(o => `\`${o}\``).join(', ')
  push(`- **Settings:** upstream latency ${options.latency} ms ± ${options.jitter} ms; ` +
    `${options.connections} connections (latency case: ${options.p99Connections}); ` +
    `${runLength(options)} per run after ${options.warmup} s of warm-up; ` +
    `${plural(options.rounds, 'interleaved round')}; undici pool of ` +
    `${options.upstreamConnections} keep-alive connections towards the upstream for the gateway ` +
    '(the hub profile\'s `connections.max`), the raw proxy and the reference servers; the ' +
    'gateway\'s configuration is its default but for the upstream, the bench\'s client key and ' +
    `rate limit, \`LOG_LEVEL=warn\`${overrides.length > 0 ? ` and ${overridden}` : ''} ` +
    `(the cached gateway: \`CACHE_TTL_SECONDS=${options.cacheTtl}\`)`)
  push(
    `- **Requests:** ${
      options.sameUrl
        ? 'every run repeats one URL per case (`--same-url`): the gateway may coalesce ' +
          'identical concurrent lookups'
        : 'uncached and latency runs send a distinct, well-formed NPWP with every request, ' +
          'never the same one twice in the whole bench (the upstream answers the same body), ' +
          'so every request is its own lookup: neither the cache nor the coalescing of ' +
          'identical concurrent lookups answers it; cached runs repeat the warmed URL'
    }. Every request carries the bench client’s bearer key (\`CLIENTS_FILE\` with scopes ` +
      'customs:read and sp2:read; its rate limit raised to 1,000,000/minute so that the ' +
      'limiter runs but never refuses); the raw proxy and the reference servers ignore it.'
  )
  const cacheLine =
    cache === undefined
      ? 'not measured (--modes without cached)'
      : cache.available
        ? `available (${cache.detail})`
        : `**not available** (${cache.detail}); the "cached" rows measure a second, uncached ` +
          'gateway process'
  push(`- **Response cache:** ${cacheLine}`)
  if (input.buildWarning !== undefined) push(`- **Build:** ${input.buildWarning}`)
  push('')

  push('Cases (bodies are precomputed from the sandbox\'s seeded data):', '')
  push('| case | gateway request | upstream body | gateway body |', '| --- | --- | --- | --- |')
  for (const c of cases) {
    push(
      `| ${c.label} | \`GET ${c.gatewayPath}\` | ${bytes(c.upstreamBytes)} | ` +
      `${bytes(c.gatewayBytes)} |`
    )
  }
  if (input.blSynthesized > 0) {
    push(
      '',
      `The seeded taxpayer has fewer than 5 BC 2.0 BLs; ${input.blSynthesized} entries of the BL ` +
      'list are synthesized in the same shape.'
    )
  }
  push('')

  push('## Targets', '')
  push(
    'The performance targets: every feature for free on a small lookup (the BL list at ' +
    'most the hand-written peer\'s CPU per request), the lead held on real answers ' +
    '(SP2 lists at most half of it), the tail at a web app\'s pace (10 connections) and ' +
    'the gateway inside the container it ships in. Medians of interleaved rounds, 100 ' +
    'connections, a 20 ± 5 ms hub, each server under test on a core of its own. A ' +
    'failing row gives its floor: what the reference servers that do less cost for the ' +
    'same work, measured in the same rounds.', '')
  const departed = departures(input)
  if (departed.length > 0) {
    push('This run departs from those conditions: ' +
    `${departed.join('; ')}.`, '')
  }
  push(
    '| case | measure | measured | goal | result | floor (reference servers) |',
    '| --- | --- | --- | --- | --- | --- |'
  )
  for (const t of targets) {
    push(
      `| ${t.case} | ${t.measure} | ${t.measured}${t.note !== undefined ? ` — ${t.note}` : ''} | ` +
      `${t.goal} | ${t.result === 'pass' ? '✅ pass' : t.result === 'FAIL' ? '❌ FAIL' : 'n/a'} | ` +
      `${t.floor ?? '–'} |`
    )
  }
  push('')

  renderCpu(input, push)

  push(`## Throughput at ${options.connections} connections (median over rounds)`, '')
  push(
    '| case | mode | raw req/s | gateway req/s | ratio (median) | ratio per round | raw p50 / ' +
    'p99 (ms) | gateway p50 / p99 (ms) | gateway peak RSS | raw proxy peak RSS |'
  )
  push('| --- | --- | ---: | ---: | ---: | --- | --- | --- | ---: | ---: |')
  for (const c of cases) {
    for (const kind of options.modes) {
      const list = pairs.filter(p => p.caseName === c.name && p.kind === kind)
      if (list.length === 0) continue
      const med = (f: (p: Pair) => number): number => median(list.map(f))
      const peak = (f: (p: Pair) => number | undefined): number | undefined => {
        const v = list.map(f).filter((n): n is number => n !== undefined)
        return v.length > 0 ? Math.max(...v) : undefined
      }
      const warn = list.some(p => pairProblems(p) !== '') ? ' ⚠' : ''
      push(
        `| ${c.label} | ${kindLabel(kind, cache)} | ${int(med((p) => p.raw.rps))} | ` +
        `${int(med((p) => p.gateway.rps))} | **${ratio(med((p) => p.ratio))}**${warn} | ` +
        `${list.map((p) => ratio(p.ratio)).join(', ')} | ${ms(med((p) => p.raw.p50))} / ` +
        `${ms(med((p) => p.raw.p99))} | ${ms(med((p) => p.gateway.p50))} / ` +
        `${ms(med((p) => p.gateway.p99))} | ${mb(peak((p) => p.gateway.peakRssMb))} | ` +
        `${mb(peak((p) => p.raw.peakRssMb))} |`
      )
    }
  }
  push('')

  const latency = pairs.filter(p => p.kind === 'latency')
  if (latency.length > 0) {
    push(
      `## Latency at ${options.p99Connections} connections ` +
      `(${cases.find((c) => c.name === 'sp2-20')?.label ?? 'sp2-20'}, uncached)`,
      ''
    )
    push(
      '| round | raw req/s | raw p50 / p99 (ms) | gateway req/s | gateway p50 / p99 (ms) | p50 ' +
      'added (ms) | p99 added (ms) |'
    )
    push('| ---: | ---: | --- | ---: | --- | ---: | ---: |')
    for (const p of latency) {
      push(
        `| ${p.round} | ${int(p.raw.rps)} | ${ms(p.raw.p50)} / ${ms(p.raw.p99)} | ` +
        `${int(p.gateway.rps)} | ${ms(p.gateway.p50)} / ${ms(p.gateway.p99)} | ` +
        `${signedMs(p.gateway.p50 - p.raw.p50)} | ${signedMs(p.p99Added)} |`
      )
    }
    push(
      `| **median** | | | | | ${signedMs(median(latency.map((p) => p.gateway.p50 - p.raw.p50)))} ` +
      `| **${signedMs(median(latency.map((p) => p.p99Added)))}** |`
    )
    push('')
  }

  renderReferences(input, push)
  renderContainer(input, push)

  push('## Every run', '')
  push(
    '| round | case | mode | conns | order | raw req/s | raw p50 / p99 (ms) | gateway req/s | ' +
    'gateway p50 / p99 (ms) | req/s ratio | CPU per request raw / gateway | CPU ratio | CPU raw ' +
    '/ gateway (cores) | load side raw / gateway (cores) | other load raw / gateway (cores) | ' +
    'gateway peak RSS | problems and gateway warnings |'
  )
  push(
    '| ---: | --- | --- | ---: | --- | ---: | --- | ---: | --- | ---: | --- | ---: | --- | --- | ' +
    '--- | ---: | --- |'
  )
  for (const p of pairs) {
    const label = cases.find(c => c.name === p.caseName)?.label ?? p.caseName
    push(
      `| ${p.round} | ${label} | ${kindLabel(p.kind, cache)} | ${p.connections} | ${p.order} | ` +
      `${int(p.raw.rps)} | ${ms(p.raw.p50)} / ${ms(p.raw.p99)} | ${int(p.gateway.rps)} | ` +
      `${ms(p.gateway.p50)} / ${ms(p.gateway.p99)} | ${ratio(p.ratio)} | ` +
      `${us(p.raw.usPerRequest)} / ${us(p.gateway.usPerRequest)} | ${ratio(p.cpuRatio)} | ` +
      `${cores(p.raw.targetCores)} / ${cores(p.gateway.targetCores)} | ${cores(p.raw.loadCores)} ` +
      `/ ${cores(p.gateway.loadCores)} | ${cores(p.raw.otherCores)} / ` +
      `${cores(p.gateway.otherCores)} | ${mb(p.gateway.peakRssMb)} | ` +
      `${pairNotes(p, input.pinning.pinned)} |`
    )
  }
  push('')
  const peaks = Object.entries(input.lifetimePeaks).filter(([, v]) => v !== undefined)
  if (peaks.length > 0) {
    push(
      'Lifetime peak RSS (VmHWM) at the end: ' +
      `${peaks.map(([name, v]) => `${name} ${mb(v)}`).join(', ')}.`,
      ''
    )
  }

  if (input.transcoder !== undefined) {
    push('## The transcoder alone', '')
    push(
      "`bench/transcode-speed.ts` in the bench's process after the runs above: each hub body " +
      'transcoded into the fresh envelope over and over, 5 rounds of 0.4 s of CPU time (one of ' +
      "0.1 s in a run shorter than 2 s), timed by the process's own CPU time (so other work on " +
      "the machine does not count; the collector's threads do). MB are of the hub's bytes read.",
      ''
    )
    push(
      '| body | bytes | MB/s (median) | MB/s per round | µs per body (median) |',
      '| --- | ---: | ---: | --- | ---: |'
    )
    for (const t of input.transcoder) {
      push(
        `| ${t.body} | ${int(t.bytes)} | **${Math.round(t.mbPerSecond)}** | ` +
        `${t.rounds.map((r) => Math.round(r)).join(', ')} | ${t.usPerBody.toFixed(0)} |`
      )
    }
    push('')
  }
  if (input.profile !== undefined) {
    const { summary, rps } = input.profile
    push(`## Where the gateway spends its time (${input.profile.caseLabel})`, '')
    push('`node --cpu-prof` on a separate gateway process (pinned like the others) during one ' +
      `${runLength(options)} run at ${options.connections} connections (${int(rps)} req/s, ` +
      'profiler overhead included; not used for the figures above), start-up left out; the ' +
      'warm-up, the run and the requests still in flight after it are included. Self time is ' +
      'a function\'s own time: JSON.parse and JSON.stringify are C++ builtins and appear as the ' +
      'self time of the JavaScript function that calls them. ' +
      `Busy ${Math.round(summary.busyMs)} ms of ${Math.round(summary.totalMs)} ms sampled.`, '')
    push('Self time by origin:', '')
    push('| origin | self time | share of busy |', '| --- | ---: | ---: |')
    for (const o of summary.origins) {
      push(`| ${o.name} | ${Math.round(o.ms)} ms | ` +
      `${(o.share * 100).toFixed(1)} % |`)
    }
    push('', 'Top functions by self time:', '')
    push('| function | self time | share of busy |', '| --- | ---: | ---: |')
    for (const f of summary.functions) {
      push(
        `| \`${f.name.replaceAll('|', '\\|')}\` | ${Math.round(f.ms)} ms | ` +
        `${(f.share * 100).toFixed(1)} % |`
      )
    }
    push('')
  }

  push('## How it is measured', '')
  push(
    '- Every process is its own process on 127.0.0.1: a minimal upstream (`bench/upstream.ts`, ' +
    "plain `node:http`) serving the precomputed bodies at the hub's addresses after latency ± " +
    'uniform jitter; the raw proxy (`bench/raw-proxy.ts`, Fastify + `@fastify/reply-from`, the ' +
    'baseline a user would write: path mapping, date to `YYYYMMDD`, the two credential headers, ' +
    'body passed through); the gateway (`LOG_LEVEL=warn`, otherwise its default configuration ' +
    "but for the upstream and the bench's client); for the cached rows, a second gateway with " +
    '`CACHE_TTL_SECONDS` set, warmed once per URL; the reference servers (below); and with ' +
    '`--redis` a redis-server.'
  )
  push(
    '- Pinning (`taskset`, when the machine has two CPUs or more): the server under test ' +
    '(gateway, raw proxy, reference server) runs on a CPU of its own, the load generator and the ' +
    'upstream (and Redis) on another. The servers take turns, one measured at a time, so the one ' +
    'measured has its core to itself but for the machine\'s other work ("other load"). The ' +
    'gateway\'s transcoding threads (`TRANSCODE_THREADS`) share its core.'
  )
  push(
    "- CPU per request: each server's own CPU time (user + system, every thread) over the " +
    "measured run, divided by its 2xx answers. It counts the server's whole cost of an answer, " +
    "the kernel's socket work included, and nothing of the load generator's or the upstream's. " +
    'The ratios of the targets are taken within a pair (or against the reference server measured ' +
    'right after it) and the median is over rounds.'
  )
  push(
    '- Load: autocannon (programmatic, in the runner process), HTTP/1.1 keep-alive, no ' +
    'pipelining. Each run is preceded by a warm-up of the same target. req/s counts 2xx answers ' +
    'only; p50/p99 are exact percentiles of every 2xx response time (autocannon\'s own histogram ' +
    'has 1 ms resolution). "Load side" is the cores the runner and the upstream used: near 1 on ' +
    'a pinned run, the load generator rather than the server may have set the pace (flagged in ' +
    '"Every run").'
  )
  push(
    '- Rounds are interleaved: within a round each case runs raw proxy then gateway back to ' +
    'back, and the order alternates from one round to the next to cancel drift. Between runs the ' +
    'bench waits until its processes are idle, since a server keeps working on the requests a ' +
    'run abandons when it stops.'
  )
  push(
    '- Other load: the cores used meanwhile by processes outside the bench (from `/proc/stat`), ' +
    'which shows when a neighbour made a run noisy.'
  )
  push(
    '- Peak RSS is read from `/proc/<pid>/status` (VmRSS sampled every 100 ms; VmHWM when the ' +
    'all-time peak moved during the run).'
  )
  push(
    '- Reference servers (`bench/reference-server.ts`, unless `--no-references`): `buffer` and ' +
    '`parse` run after each uncached and latency pair, `cache` after each cached pair. `parse` ' +
    'is the measure of one target; otherwise they take no part in a verdict, they give a failing ' +
    'target its floor.'
  )
  push('- The hand-written peer runs after the reference servers of each uncached and ' +
    'latency pair; the BL and SP2 targets are the gateway\'s CPU per request over its, in ' +
    'the same round.')
  push('- The container case (unless `--no-container`): a third gateway started as ' +
    '`deploy/kubernetes/` runs it, after each uncached BL and SP2-500 pair; see "In the ' +
    'container".')
  push(
    '- A run with non-2xx answers, socket errors or timeouts is flagged ⚠ and its target cannot ' +
    'pass.'
  )
  push('- Not part of `npm test`; `test/bench/bench-smoke.test.ts` only checks that a run of 200 ' +
    'requests a server and pair produces these tables.')
  push('')
  return lines.join('\n')
}

/** CPU per answered request, gateway against raw proxy, with the req/s ratio beside it. */
function renderCpu (
  { options, cases, cache, pairs, pinning }: ReportInput,
  push: (...l: string[]) => void
): void {
  push('## CPU per answered request (median over rounds)', '')
  push(
    'Against the raw proxy of the same pair and against the hand-written peer measured ' +
      'right after it (for a cached row, the peer of the uncached pair of the same round: it ' +
      'keeps no cache).',
    ''
  )
  push(
    '| case | mode | conns | raw proxy | gateway | gateway ÷ raw proxy, CPU (median) | ' +
      'per round | gateway ÷ raw proxy, req/s (median) | hand-written peer | ' +
      'gateway ÷ hand-written, CPU (median) | per round | load side, highest (cores) |'
  )
  push('| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- | ---: |')
  for (const c of cases) {
    for (const kind of [...options.modes, 'latency'] as PairKind[]) {
      const list = pairs.filter((p) => p.caseName === c.name && p.kind === kind)
      if (list.length === 0) continue
      const loads = list
        .flatMap((p) => [p.raw.loadCores, p.gateway.loadCores])
        .filter((n): n is number => n !== undefined)
      const busiest = loads.length > 0 ? Math.max(...loads) : undefined
      const peers = list.map((p) => ({ p, peer: handWrittenOf(p, pairs) }))
      const peerUs = us(median(peers.map(({ peer }) => peer?.usPerRequest ?? Number.NaN)))
      const toPeer = peers.map(({ p, peer }) =>
        peer === undefined ? Number.NaN : cpuRatioOf(p.gateway, peer)
      )
      const toPeerCells = toPeer.every((n) => !Number.isFinite(n))
        ? '– | –'
        : `**${ratio(median(toPeer))}** | ${toPeer.map(ratio).join(', ')}`
      const rawUs = us(median(list.map((p) => p.raw.usPerRequest ?? Number.NaN)))
      const gatewayUs = us(median(list.map((p) => p.gateway.usPerRequest ?? Number.NaN)))
      const toRaw =
        `**${ratio(median(list.map((p) => p.cpuRatio)))}** | ` +
        list.map((p) => ratio(p.cpuRatio)).join(', ')
      const busy = pinning.pinned && busiest !== undefined && busiest > LOAD_SIDE_BUSY ? ' ⚠' : ''
      const conns = list[0]?.connections ?? ''
      push(
        `| ${c.label} | ${kindLabel(kind, cache)} | ${conns} | ${rawUs} | ` +
          `${gatewayUs} | ${toRaw} | ${ratio(median(list.map((p) => p.ratio)))} | ${peerUs} | ` +
          `${toPeerCells} | ${cores(busiest)}${busy} |`
      )
    }
  }
  push('')
}

/** The gateway beside the reference servers, each against the raw proxy of its pair. */
function renderReferences (
  { options, cases, pairs, cache }: ReportInput,
  push: (...l: string[]) => void
): void {
  const withReferences = pairs.filter((p) => p.references !== undefined && p.references.length > 0)
  if (withReferences.length === 0) return
  type Measured = Array<{ p: Pair; m: Measurement }>
  /**
   * One row per server measured in these pairs: the gateway, then each reference, with its
   * measurement in each pair.
   */
  const rowsOf = (
    list: Pair[]
  ): Array<{ name: string; isGateway: boolean; measured: Measured }> => {
    const modes = [...new Set(list.flatMap((p) => (p.references ?? []).map((r) => r.mode)))]
    return [
      { name: 'gateway', isGateway: true, of: (p: Pair) => p.gateway },
      ...modes.map((mode) => ({
        name: mode === 'hand-written' ? 'hand-written peer' : `reference \`${mode}\``,
        isGateway: false,
        of: (p: Pair) => referenceOf(p, mode)
      }))
    ]
      .map(({ name, isGateway, of }) => ({
        name,
        isGateway,
        measured: list
          .map((p) => ({ p, m: of(p) }))
          .filter((x): x is Measured[number] => x.m !== undefined)
      }))
      .filter((row) => row.measured.length > 0)
  }
  push('## Reference servers', '')
  push(
    'Minimal servers (`bench/reference-server.ts`: Fastify and an undici pool like the ' +
    "gateway's; no client keys, rate limiter, metrics, validation, error envelope or circuit " +
    "breaker) on the raw proxy's routes, measured right after each pair, pinned like the " +
    "gateway. `buffer` reads the hub's answer whole and sends it back; `parse` also runs " +
    '`JSON.parse` over it and `JSON.stringify` of `{ data, meta }`, renaming nothing and ' +
    'rewriting no value; `cache` (beside the cached pairs) sends the bytes it kept from ' +
    "`parse`'s first answer to that URL. They show what this machine allows a Node server doing " +
    'the same work; the gateway does more per answer than `parse` (and everything `buffer` ' +
    'does). Each ratio is against the raw proxy of the same pair; the median is over rounds.',
    ''
  )
  push(
    'The hand-written peer (`bench/hand-written-server.ts`) is what a team would write ' +
      'instead of the gateway: Fastify with a query schema, `undici.request`, `JSON.parse`, a ' +
      'recursive walk that renames snake_case keys to camelCase, turns 0/1 flags into booleans ' +
      "and the hub's date-times into ISO 8601 at +07:00, and `{ data, meta }` sent back with " +
      '`JSON.stringify`; no client keys, rate limit, metrics, cache or breaker.',
    ''
  )
  push(
    '| case | mode | server | CPU per request | ÷ raw proxy, CPU (median) | per round | gateway ' +
    `÷ server, CPU | req/s at ${options.connections} connections | ÷ raw proxy, req/s (median) | ` +
    'p50 / p99 (ms) | peak RSS |'
  )
  push('| --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | --- | ---: |')
  for (const c of cases) {
    for (const kind of options.modes) {
      const list = withReferences.filter((p) => p.caseName === c.name && p.kind === kind)
      for (const { name, isGateway, measured } of rowsOf(list)) {
        const peaks = measured.map((x) => x.m.peakRssMb).filter((n): n is number => n !== undefined)
        const warn = measured.some((x) => problemsOf(x.m) !== undefined) ? ' ⚠' : ''
        push(
          `| ${c.label} | ${kindLabel(kind, cache)} | ${name} | ` +
          `${us(median(measured.map((x) => x.m.usPerRequest ?? Number.NaN)))} | ` +
          `**${ratio(median(measured.map((x) => cpuRatioOf(x.m, x.p.raw))))}**${warn} | ` +
          `${measured.map((x) => ratio(cpuRatioOf(x.m, x.p.raw))).join(', ')} | ` +
          `${isGateway ? '–' : ratio(median(measured.map((x) => cpuRatioOf(x.p.gateway, x.m))))} ` +
          `| ${int(median(measured.map((x) => x.m.rps)))} | ` +
          `${ratio(median(measured.map((x) => x.m.rps / x.p.raw.rps)))} | ` +
          `${ms(median(measured.map((x) => x.m.p50)))} / ` +
          `${ms(median(measured.map((x) => x.m.p99)))} | ` +
          `${mb(peaks.length > 0 ? Math.max(...peaks) : undefined)} |`
        )
      }
    }
  }
  push('')
  const latency = withReferences.filter((p) => p.kind === 'latency')
  if (latency.length > 0) {
    push(
      `At ${options.p99Connections} connections ` +
      `(${cases.find((c) => c.name === 'sp2-20')?.label ?? 'sp2-20'}, uncached), against the raw ` +
      'proxy of the same pair:',
      ''
    )
    push(
      '| server | CPU per request | p50 / p99 (ms, median) | p99 added (median) | p99 added per ' +
      'round |',
      '| --- | ---: | --- | ---: | --- |'
    )
    for (const { name, measured } of rowsOf(latency)) {
      push(
        `| ${name} | ${us(median(measured.map((x) => x.m.usPerRequest ?? Number.NaN)))} | ` +
        `${ms(median(measured.map((x) => x.m.p50)))} / ` +
        `${ms(median(measured.map((x) => x.m.p99)))} | ` +
        `**${signedMs(median(measured.map((x) => x.m.p99 - x.p.raw.p99)))}** | ` +
        `${measured.map((x) => signedMs(x.m.p99 - x.p.raw.p99)).join(', ')} |`
      )
    }
    push('')
  }
}

/** The container case, run by run, against the unconstrained gateway of the same pair. */
function renderContainer (input: ReportInput, push: (...l: string[]) => void): void {
  const { container, options, cases, pairs } = input
  const runs = pairs.filter(p => p.container !== undefined)
  if (container === undefined || runs.length === 0) return
  const settings = Object.entries(container.env).map(([k, v]) => `\`${k}=${v}\``).join(', ')
  push('## In the container', '')
  push('A third gateway started as `deploy/kubernetes/` runs it: the container\'s command ' +
    `(\`${options.source ? 'src/main.ts' : 'dist/main.js'}\`), the heap Node 24 gives itself ` +
    `under the Deployment's ${container.memoryLimit} memory limit ` +
    `(${container.heapFlags.map(f => `\`${f}\``).join(' ')}, emulated: no cgroup) and the ` +
    `ConfigMap's settings (${settings}; the metrics port is a free one)` +
    `${container.leftOut !== '' ? `, but for ${container.leftOut}` : ''}, over the bench's ` +
    'own (the upstream, the client key and its limit). It runs after each uncached BL and ' +
    'SP2-500 pair, pinned like the others, on distinct lookups; the shed line is ' +
    `${mib(container.shedLineMb)} of RSS, above which it answers 503 OVERLOADED.`, '')
  push('| round | case | req/s | p50 / p99 (ms) | CPU per request | unconstrained gateway | ' +
    'ratio | peak RSS | of the shed line | 503 OVERLOADED | problems |')
  push('| ---: | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |')
  for (const p of runs) {
    const m = p.container as Measurement
    const label = cases.find(c => c.name === p.caseName)?.label ?? p.caseName
    const share = m.peakRssMb !== undefined && container.shedLineMb !== undefined
      ? `${Math.round(m.peakRssMb / container.shedLineMb * 100)} %`
      : '–'
    const problems = [problemsOf(m), m.logged !== undefined ? `logged ${m.logged}` : undefined]
      .filter(n => n !== undefined).join('; ').replaceAll('|', '\\|')
    push(`| ${p.round} | ${label} | ${int(m.rps)} | ${ms(m.p50)} / ${ms(m.p99)} | ` +
      `${us(m.usPerRequest)} | ${us(p.gateway.usPerRequest)} | ` +
      `${ratio(cpuRatioOf(m, p.gateway))} | ${mib(m.peakRssMb)} | ${share} | ` +
      `${m.overloaded ?? 0} | ${problems !== '' ? problems : 'none'} |`)
  }
  push('')
}

/** The targets as a plain-text block for stdout. */
export function renderTargetsText (input: ReportInput): string {
  return evaluateTargets(input)
    .map(
      (t) =>
        `${t.result === 'pass' ? 'PASS' : t.result === 'FAIL' ? 'FAIL' : 'n/a '}  ${t.case}: ` +
        `${t.measure}: ${t.measured} (goal ` +
        `${t.goal})${t.floor !== undefined ? `; floor: ${t.floor}` : ''}` +
        `${t.note !== undefined ? ` — ${t.note}` : ''}`
    )
    .join('\n')
}
