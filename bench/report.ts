// The markdown report: targets, medians, every run, machine and command.
import type { LoadResult } from './load.ts'
import type { BenchOptions, CaseName, ModeName } from './options.ts'
import type { ProfileSummary } from './profile.ts'
import type { ReferenceMode } from './shared.ts'

export interface Measurement extends LoadResult {
  /** Peak RSS of the measured process during the run, MB (Linux only). */
  peakRssMb: number | undefined
  /** What the process logged at warn level or above during the run. */
  logged?: string
  /** Cores the measured process used on average. */
  targetCores: number | undefined
  /** Cores used meanwhile by processes outside the bench (noise on a shared machine). */
  otherCores: number | undefined
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
  /** Gateway p99 minus raw-proxy p99, ms. */
  p99Added: number
  /** The reference servers measured right after the pair (`--references`; uncached and latency runs). */
  references?: Array<{ mode: ReferenceMode, m: Measurement }>
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
  profile: { summary: ProfileSummary, durationS: number, rps: number, caseLabel: string } | undefined
  gatewayEntry: string
  blSynthesized: number
  /** Set when the build reported errors but emitted. */
  buildWarning: string | undefined
  /** Commit and working-tree state of src/. */
  gatewayCode: string
}

export interface TargetResult {
  name: string
  measured: string
  goal: string
  result: 'pass' | 'FAIL' | 'n/a'
  note?: string
}

export function median (values: number[]): number {
  const v = values.filter(Number.isFinite).sort((a, b) => a - b)
  if (v.length === 0) return Number.NaN
  const mid = v.length >> 1
  return v.length % 2 === 1 ? v[mid] as number : ((v[mid - 1] as number) + (v[mid] as number)) / 2
}

const int = (n: number | undefined): string => n === undefined || !Number.isFinite(n) ? '–' : Math.round(n).toLocaleString('en-US')
const ms = (n: number): string => Number.isFinite(n) ? n.toFixed(1) : '–'
const ratio = (n: number): string => Number.isFinite(n) ? n.toFixed(2) : '–'
/** A ratio against its goal: with three decimals where two would hide on which side of the goal it is. */
const ratioAgainst = (n: number, goal: number): string => Number.isFinite(n) && n.toFixed(2) === goal.toFixed(2) && n !== goal ? n.toFixed(3) : ratio(n)
const signedMs = (n: number): string => Number.isFinite(n) ? `${n >= 0 ? '+' : ''}${n.toFixed(1)}` : '–'
const cores = (n: number | undefined): string => n === undefined || !Number.isFinite(n) ? '–' : n.toFixed(2)
const mb = (n: number | undefined): string => n === undefined || !Number.isFinite(n) ? '–' : `${Math.round(n)} MB`

function bytes (n: number): string {
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(2)} MB`
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KB`
  return `${n} B`
}

/** Problems of one run: non-2xx answers, socket errors, timeouts. */
export function problemsOf (m: Measurement): string | undefined {
  const parts: string[] = []
  if (m.non2xx > 0) {
    const codes = Object.entries(m.statuses).filter(([code]) => !code.startsWith('2')).map(([code, n]) => `${n}×${code}`)
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
  return [raw !== undefined ? `⚠ raw: ${raw}` : '', gw !== undefined ? `⚠ gateway: ${gw}` : ''].filter(s => s !== '').join('; ')
}

/** Problems, plus what the gateway logged at warn level (e.g. load shedding), for the table. */
function pairNotes (p: Pair): string {
  const notes = [pairProblems(p), p.gateway.logged !== undefined ? `gateway logged ${p.gateway.logged}` : ''].filter(s => s !== '')
  return notes.length > 0 ? notes.join('; ').replaceAll('|', '\\|') : 'none'
}

const RATIO_TARGETS: Array<{ caseName: CaseName, goal: number }> = [
  { caseName: 'bl', goal: 0.90 },
  { caseName: 'sp2-20', goal: 0.75 },
  { caseName: 'sp2-500', goal: 0.30 }
]
const P99_ADDED_GOAL_MS = 2
const RSS_GOAL_MB = 250

export function evaluateTargets (input: ReportInput): TargetResult[] {
  const { pairs, cases, cache, options } = input
  const label = (name: CaseName): string => cases.find(c => c.name === name)?.label ?? name
  const of = (caseName: CaseName, kind: PairKind): Pair[] => pairs.filter(p => p.caseName === caseName && p.kind === kind)
  const flagged = (list: Pair[]): string | undefined => {
    const bad = list.filter(p => pairProblems(p) !== '')
    if (bad.length === 0) return undefined
    const statuses = new Set<string>()
    for (const p of bad) {
      for (const m of [p.raw, p.gateway]) for (const code of Object.keys(m.statuses)) if (!code.startsWith('2')) statuses.add(code)
    }
    const what = statuses.size > 0 ? `non-2xx answers (${[...statuses].join(', ')})` : 'errors'
    return `${bad.length} of ${list.length} round${list.length === 1 ? '' : 's'} had ${what}, which a pass does not allow; see "Every run"`
  }
  const out: TargetResult[] = []
  const rounds = (list: Pair[]): string => `${list.length} round${list.length === 1 ? '' : 's'}`

  for (const { caseName, goal } of RATIO_TARGETS) {
    const list = of(caseName, 'uncached')
    const name = `${label(caseName)}, uncached: gateway/raw req/s at ${options.connections} connections`
    if (list.length === 0) {
      out.push({ name, measured: 'not run', goal: `≥ ${goal.toFixed(2)}`, result: 'n/a' })
      continue
    }
    const m = median(list.map(p => p.ratio))
    const note = flagged(list)
    out.push({ name, measured: `${ratioAgainst(m, goal)} (median of ${rounds(list)})`, goal: `≥ ${goal.toFixed(2)}`, result: m >= goal && note === undefined ? 'pass' : 'FAIL', ...(note !== undefined ? { note } : {}) })
  }

  for (const c of cases) {
    const list = of(c.name, 'cached')
    const name = `${c.label}, cached: gateway/raw req/s at ${options.connections} connections`
    if (!options.modes.includes('cached') || list.length === 0) continue
    const m = median(list.map(p => p.ratio))
    if (cache?.available !== true) {
      out.push({ name, measured: `${ratio(m)} (cache not available: uncached gateway measured)`, goal: '≥ 1.00', result: 'n/a', note: cache?.detail ?? 'cache not available' })
      continue
    }
    const note = flagged(list)
    out.push({ name, measured: `${ratioAgainst(m, 1)} (median of ${rounds(list)})`, goal: '≥ 1.00', result: m >= 1 && note === undefined ? 'pass' : 'FAIL', ...(note !== undefined ? { note } : {}) })
  }

  const latency = pairs.filter(p => p.kind === 'latency')
  const latencyName = `${label('sp2-20')}: p99 added over the raw proxy at ${options.p99Connections} connections`
  if (latency.length === 0) {
    out.push({ name: latencyName, measured: 'not run', goal: `≤ ${P99_ADDED_GOAL_MS} ms`, result: 'n/a' })
  } else {
    const m = median(latency.map(p => p.p99Added))
    const note = flagged(latency)
    out.push({ name: latencyName, measured: `${signedMs(m)} ms (median of ${rounds(latency)})`, goal: `≤ ${P99_ADDED_GOAL_MS} ms`, result: m <= P99_ADDED_GOAL_MS && note === undefined ? 'pass' : 'FAIL', ...(note !== undefined ? { note } : {}) })
  }

  const big = pairs.filter(p => p.caseName === 'sp2-500' && p.kind !== 'latency').map(p => p.gateway.peakRssMb).filter((n): n is number => n !== undefined)
  const rssName = `${label('sp2-500')}: peak RSS of the gateway`
  if (big.length === 0) {
    out.push({ name: rssName, measured: pairs.some(p => p.caseName === 'sp2-500') ? 'not measurable here (no /proc)' : 'not run', goal: `< ${RSS_GOAL_MB} MB`, result: 'n/a' })
  } else {
    const peak = Math.max(...big)
    out.push({ name: rssName, measured: `${mb(peak)} (highest of ${big.length} runs)`, goal: `< ${RSS_GOAL_MB} MB`, result: peak < RSS_GOAL_MB ? 'pass' : 'FAIL' })
  }
  return out
}

function kindLabel (kind: PairKind, cache: CacheStatus | undefined): string {
  if (kind === 'cached') return cache?.available === true ? 'cached' : 'cached (cache not available)'
  return kind
}

export function renderReport (input: ReportInput): string {
  const { options, machine, cases, cache, pairs } = input
  const targets = evaluateTargets(input)
  const lines: string[] = []
  const push = (...l: string[]): void => { lines.push(...l) }

  push('# Benchmarks', '')
  push('Generated by `bench/run.ts`; do not edit by hand, run the command again.', '')
  push(`- **Command:** \`${input.command}\``)
  push(`- **Date:** ${input.date.toISOString()}`)
  push(`- **Machine:** ${machine.cpu} × ${machine.cpus}, ${machine.memoryGb.toFixed(1)} GB RAM, ${machine.os}; load average at start ${machine.loadAverage.map(n => n.toFixed(2)).join(' / ')}`)
  push(`- **Node:** ${machine.node}`)
  push(`- **Gateway code:** ${input.gatewayCode}, run from \`${input.gatewayEntry}\`${Object.keys(options.gatewayEnv).length > 0 ? ` with ${Object.entries(options.gatewayEnv).map(([k, v]) => `\`${k}=${v}\``).join(', ')}` : ''}`)
  push(`- **Settings:** upstream latency ${options.latency} ms ± ${options.jitter} ms; ${options.connections} connections (latency case: ${options.p99Connections}); ${options.duration} s per run after ${options.warmup} s of warm-up; ${options.rounds} interleaved round${options.rounds === 1 ? '' : 's'}; undici pool of ${options.upstreamConnections} keep-alive connections towards the upstream for both the gateway (\`UPSTREAM_MAX_CONNECTIONS\`) and the raw proxy`)
  push(`- **Requests:** ${options.sameUrl
    ? 'every run repeats one URL per case (`--same-url`): the gateway may coalesce identical concurrent lookups'
    : 'uncached and latency runs send a distinct, well-formed NPWP with every request (the upstream answers the same body), so every request is its own lookup: neither the cache nor the coalescing of identical concurrent lookups answers it; cached runs repeat the warmed URL'}. Every request carries the bench client’s bearer key (\`CLIENTS_FILE\` with scopes customs:read and sp2:read; its rate limit raised to 1,000,000/minute so that the limiter runs but never refuses); the raw proxy ignores it.`)
  const cacheLine = cache === undefined
    ? 'not measured (--modes without cached)'
    : cache.available ? `available (${cache.detail})` : `**not available** (${cache.detail}); the "cached" rows measure a second, uncached gateway process`
  push(`- **Response cache:** ${cacheLine}`)
  if (input.buildWarning !== undefined) push(`- **Build:** ${input.buildWarning}`)
  push('')

  push('Cases (bodies are precomputed from the sandbox\'s seeded data):', '')
  push('| case | gateway request | upstream body | gateway body |', '| --- | --- | --- | --- |')
  for (const c of cases) push(`| ${c.label} | \`GET ${c.gatewayPath}\` | ${bytes(c.upstreamBytes)} | ${bytes(c.gatewayBytes)} |`)
  if (input.blSynthesized > 0) push('', `The seeded taxpayer has fewer than 5 BC 2.0 BLs; ${input.blSynthesized} entries of the BL list are synthesized in the same shape.`)
  push('')

  push('## Targets', '')
  push('| target | measured | goal | result |', '| --- | --- | --- | --- |')
  for (const t of targets) push(`| ${t.name} | ${t.measured}${t.note !== undefined ? ` — ${t.note}` : ''} | ${t.goal} | ${t.result === 'pass' ? '✅ pass' : t.result === 'FAIL' ? '❌ FAIL' : 'n/a'} |`)
  push('')

  push(`## Throughput at ${options.connections} connections (median over rounds)`, '')
  push('| case | mode | raw req/s | gateway req/s | ratio (median) | ratio per round | raw p50 / p99 (ms) | gateway p50 / p99 (ms) | gateway peak RSS | raw proxy peak RSS |')
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
      push(`| ${c.label} | ${kindLabel(kind, cache)} | ${int(med(p => p.raw.rps))} | ${int(med(p => p.gateway.rps))} | **${ratio(med(p => p.ratio))}**${warn} | ${list.map(p => ratio(p.ratio)).join(', ')} | ${ms(med(p => p.raw.p50))} / ${ms(med(p => p.raw.p99))} | ${ms(med(p => p.gateway.p50))} / ${ms(med(p => p.gateway.p99))} | ${mb(peak(p => p.gateway.peakRssMb))} | ${mb(peak(p => p.raw.peakRssMb))} |`)
    }
  }
  push('')

  const latency = pairs.filter(p => p.kind === 'latency')
  if (latency.length > 0) {
    push(`## Latency at ${options.p99Connections} connections (${cases.find(c => c.name === 'sp2-20')?.label ?? 'sp2-20'}, uncached)`, '')
    push('| round | raw req/s | raw p50 / p99 (ms) | gateway req/s | gateway p50 / p99 (ms) | p50 added (ms) | p99 added (ms) |')
    push('| ---: | ---: | --- | ---: | --- | ---: | ---: |')
    for (const p of latency) {
      push(`| ${p.round} | ${int(p.raw.rps)} | ${ms(p.raw.p50)} / ${ms(p.raw.p99)} | ${int(p.gateway.rps)} | ${ms(p.gateway.p50)} / ${ms(p.gateway.p99)} | ${signedMs(p.gateway.p50 - p.raw.p50)} | ${signedMs(p.p99Added)} |`)
    }
    push(`| **median** | | | | | ${signedMs(median(latency.map(p => p.gateway.p50 - p.raw.p50)))} | **${signedMs(median(latency.map(p => p.p99Added)))}** |`)
    push('')
  }

  renderReferences(input, push)

  push('## Every run', '')
  push('| round | case | mode | conns | order | raw req/s | raw p50 / p99 (ms) | gateway req/s | gateway p50 / p99 (ms) | ratio | CPU raw / gateway (cores) | other load raw / gateway (cores) | gateway peak RSS | problems and gateway warnings |')
  push('| ---: | --- | --- | ---: | --- | ---: | --- | ---: | --- | ---: | --- | --- | ---: | --- |')
  for (const p of pairs) {
    const label = cases.find(c => c.name === p.caseName)?.label ?? p.caseName
    push(`| ${p.round} | ${label} | ${kindLabel(p.kind, cache)} | ${p.connections} | ${p.order} | ${int(p.raw.rps)} | ${ms(p.raw.p50)} / ${ms(p.raw.p99)} | ${int(p.gateway.rps)} | ${ms(p.gateway.p50)} / ${ms(p.gateway.p99)} | ${ratio(p.ratio)} | ${cores(p.raw.targetCores)} / ${cores(p.gateway.targetCores)} | ${cores(p.raw.otherCores)} / ${cores(p.gateway.otherCores)} | ${mb(p.gateway.peakRssMb)} | ${pairNotes(p)} |`)
  }
  push('')
  const peaks = Object.entries(input.lifetimePeaks).filter(([, v]) => v !== undefined)
  if (peaks.length > 0) push(`Lifetime peak RSS (VmHWM) at the end: ${peaks.map(([name, v]) => `${name} ${mb(v)}`).join(', ')}.`, '')

  if (input.profile !== undefined) {
    const { summary, durationS, rps } = input.profile
    push(`## Where the gateway spends its time (${input.profile.caseLabel})`, '')
    push(`\`node --cpu-prof\` on a separate gateway process during one ${durationS} s run at ${options.connections} connections (${int(rps)} req/s, profiler overhead included; not used for the figures above), start-up left out; the warm-up, the run and the requests still in flight after it are included. Self time is a function's own time: JSON.parse and JSON.stringify are C++ builtins and appear as the self time of the JavaScript function that calls them. Busy ${Math.round(summary.busyMs)} ms of ${Math.round(summary.totalMs)} ms sampled.`, '')
    push('Self time by origin:', '')
    push('| origin | self time | share of busy |', '| --- | ---: | ---: |')
    for (const o of summary.origins) push(`| ${o.name} | ${Math.round(o.ms)} ms | ${(o.share * 100).toFixed(1)} % |`)
    push('', 'Top functions by self time:', '')
    push('| function | self time | share of busy |', '| --- | ---: | ---: |')
    for (const f of summary.functions) push(`| \`${f.name.replaceAll('|', '\\|')}\` | ${Math.round(f.ms)} ms | ${(f.share * 100).toFixed(1)} % |`)
    push('')
  }

  push('## How it is measured', '')
  push('- Every process is its own `node` process on 127.0.0.1: a minimal upstream (`bench/upstream.ts`, plain `node:http`) serving the precomputed bodies at the hub\'s addresses after latency ± uniform jitter; the raw proxy (`bench/raw-proxy.ts`, Fastify + `@fastify/reply-from`, the baseline a user would write: path mapping, date to `YYYYMMDD`, the two credential headers, body passed through); the gateway (`LOG_LEVEL=warn`); and, for the cached rows, a second gateway with `CACHE_TTL_SECONDS` set, warmed once per URL.')
  push('- Load: autocannon (programmatic, in the runner process), HTTP/1.1 keep-alive, no pipelining. Each run is preceded by a warm-up of the same target. req/s counts 2xx answers only; p50/p99 are exact percentiles of every 2xx response time (autocannon\'s own histogram has 1 ms resolution).')
  push('- Rounds are interleaved: within a round each case runs raw proxy then gateway back to back, and the order alternates from one round to the next to cancel drift. The ratio is computed within a pair and the table reports the median of the per-round ratios, because the machine is shared and noisy.')
  push('- CPU: the cores the measured process used on average, and the cores used meanwhile by processes outside the bench (from `/proc/stat`), which shows when a neighbour made a run noisy. Between runs the bench waits until its processes are idle, since a server keeps working on the requests a run abandons when it stops.')
  push('- Peak RSS is read from `/proc/<pid>/status` (VmRSS sampled every 100 ms; VmHWM when the all-time peak moved during the run).')
  push('- With `--references`, two minimal servers run after each uncached and latency pair (see "Reference servers"); they take no part in the targets.')
  push('- A run with non-2xx answers, socket errors or timeouts is flagged ⚠ and its target cannot pass.')
  push('- Not part of `npm test`; `test/bench-smoke.test.ts` only checks that a one-second run produces this table.')
  push('')
  return lines.join('\n')
}

/** `--references`: the gateway beside the two minimal servers, each against the raw proxy of its pair. */
function renderReferences ({ options, cases, pairs }: ReportInput, push: (...l: string[]) => void): void {
  const withReferences = pairs.filter(p => p.references !== undefined && p.references.length > 0)
  if (withReferences.length === 0) return
  const servers = [...new Set(withReferences.flatMap(p => p.references!.map(r => r.mode)))]
  type Measured = Array<{ p: Pair, m: Measurement }>
  /** One row per server measured in these pairs: the gateway, then each reference, with its measurement in each pair. */
  const rowsOf = (list: Pair[]): Array<{ name: string, measured: Measured }> => [
    { name: 'gateway', of: (p: Pair) => p.gateway },
    ...servers.map(mode => ({ name: `reference \`${mode}\``, of: (p: Pair) => p.references?.find(r => r.mode === mode)?.m }))
  ].map(({ name, of }) => ({ name, measured: list.map(p => ({ p, m: of(p) })).filter((x): x is Measured[number] => x.m !== undefined) }))
    .filter(row => row.measured.length > 0)
  push('## Reference servers', '')
  push('Measured with `--references`, right after each uncached and latency pair, on the raw proxy\'s routes: two minimal servers (`bench/reference-server.ts`: Fastify and an undici pool like the gateway\'s; no client keys, rate limiter, metrics, validation, error envelope or circuit breaker). `buffer` reads the hub\'s answer whole and sends it back; `parse` also runs `JSON.parse` over it and `JSON.stringify` of `{ data, meta }`, renaming nothing and rewriting no value. They show what this machine allows a Node server that reads the answer; the gateway does more work per answer than `parse` (and everything `buffer` does). Each ratio is against the raw proxy of the same pair; the median is over rounds.', '')
  push(`| case | server | req/s at ${options.connections} connections | ratio to raw (median) | ratio per round | p50 / p99 (ms) | peak RSS |`)
  push('| --- | --- | ---: | ---: | --- | --- | ---: |')
  for (const c of cases) {
    const list = withReferences.filter(p => p.caseName === c.name && p.kind === 'uncached')
    for (const { name, measured } of rowsOf(list)) {
      const peaks = measured.map(x => x.m.peakRssMb).filter((n): n is number => n !== undefined)
      push(`| ${c.label} | ${name} | ${int(median(measured.map(x => x.m.rps)))} | **${ratio(median(measured.map(x => x.m.rps / x.p.raw.rps)))}** | ${measured.map(x => ratio(x.m.rps / x.p.raw.rps)).join(', ')} | ${ms(median(measured.map(x => x.m.p50)))} / ${ms(median(measured.map(x => x.m.p99)))} | ${mb(peaks.length > 0 ? Math.max(...peaks) : undefined)} |`)
    }
  }
  push('')
  const latency = withReferences.filter(p => p.kind === 'latency')
  if (latency.length > 0) {
    push(`At ${options.p99Connections} connections (${cases.find(c => c.name === 'sp2-20')?.label ?? 'sp2-20'}, uncached), against the raw proxy of the same pair:`, '')
    push('| server | p50 / p99 (ms, median) | p99 added (median) | p99 added per round |', '| --- | --- | ---: | --- |')
    for (const { name, measured } of rowsOf(latency)) {
      push(`| ${name} | ${ms(median(measured.map(x => x.m.p50)))} / ${ms(median(measured.map(x => x.m.p99)))} | **${signedMs(median(measured.map(x => x.m.p99 - x.p.raw.p99)))}** | ${measured.map(x => signedMs(x.m.p99 - x.p.raw.p99)).join(', ')} |`)
    }
    push('')
  }
}

/** The targets as a plain-text block for stdout. */
export function renderTargetsText (input: ReportInput): string {
  return evaluateTargets(input).map(t => `${t.result === 'pass' ? 'PASS' : t.result === 'FAIL' ? 'FAIL' : 'n/a '}  ${t.name}: ${t.measured} (goal ${t.goal})${t.note !== undefined ? ` — ${t.note}` : ''}`).join('\n')
}
