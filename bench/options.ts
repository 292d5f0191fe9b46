// Command-line options of `npm run bench`.
import { parseArgs } from 'node:util'

export const CASE_NAMES = ['bl', 'sp2-20', 'sp2-500'] as const
export type CaseName = typeof CASE_NAMES[number]
export const MODE_NAMES = ['uncached', 'cached'] as const
export type ModeName = typeof MODE_NAMES[number]

export interface BenchOptions {
  /** Seconds per measured run. */
  duration: number
  /** Requests per measured run instead (autocannon's `amount`); 0: run for `duration`. */
  requests: number
  rounds: number
  connections: number
  /** Connections of the latency case (SP2-20). */
  p99Connections: number
  /** Upstream latency and jitter, ms. */
  latency: number
  jitter: number
  cases: CaseName[]
  modes: ModeName[]
  /** Warm-up seconds before each measured run. */
  warmup: number
  /** undici pool size towards the upstream, for both the gateway and the raw proxy. */
  upstreamConnections: number
  cacheTtl: number
  /** Extra environment of the gateway processes (`--gateway-env NAME=VALUE`, repeatable). */
  gatewayEnv: Record<string, string>
  /** Extra node flags of the gateway processes (`--gateway-flag=--trace-gc`, repeatable). */
  gatewayFlags: string[]
  /** Keep the child processes' logs (printed path) instead of deleting them. */
  keepLogs: boolean
  /** Uncached runs repeat one URL (measures coalescing of identical lookups) instead of a distinct NPWP per request. */
  sameUrl: boolean
  /** Markdown output file, relative to the repository root unless absolute. */
  out: string
  build: boolean
  /** Run the gateway from src/ with tsx instead of the built dist/. */
  source: boolean
  /** Run one extra SP2-500 load against a --cpu-prof gateway and summarise it. */
  profile: boolean
  /** Measure the minimal reference servers (bench/reference-server.ts) beside every pair (default on; `--no-references`). */
  references: boolean
  /** Also measure the gateway as deploy/kubernetes/ runs it (bench/container.ts). */
  container: boolean
  /** Pin the server under test to one CPU and the load side to another with taskset (default on; `--no-pin`). */
  pin: boolean
  /** Start a redis-server beside the upstream and give each gateway REDIS_URL to a database of its own. */
  redis: boolean
  /** The case the CPU profile runs. */
  profileCase: CaseName
  profileMode: ModeName
  /** Where to copy the raw .cpuprofile (open it in Chrome DevTools); not kept when unset. */
  profileOut: string | undefined
  /** --stages: seconds of unmeasured load each variant gets first, to fill its lookup cache. */
  fill: number
  /** Requests per second offered in every measured run (autocannon's overallRate); 0 for as fast as the connections go. */
  rate: number
  /** Measure the cost of each stage of an uncached lookup (bench/stages/) instead of the targets. */
  stages: boolean
  help: boolean
}

export const USAGE = `Usage: npm run bench -- [options]

Measures the gateway against a raw @fastify/reply-from proxy, the
hand-written peer a team would write instead and minimal reference servers,
all in front of one hub-like upstream, in interleaved rounds. The server
under test runs on a CPU of its own (taskset), the load generator and the
upstream on another; each server's CPU time (/proc/<pid>/stat, utime +
stime) is divided by its answered (2xx) requests.
Reports CPU per request and its ratios, req/s, p50/p99 and peak RSS, and the
performance targets with pass/fail and, for a miss, the reference servers'
floor. Writes the markdown report to --out and prints it.

  --duration <s>              seconds per measured run (default 10)
  --requests <n>              send n requests per measured run instead of running for
                              --duration: each run does the same work however busy the
                              machine (default 0: by --duration)
  --rounds <n>                interleaved rounds (default 3)
  --connections <n>           connections of the throughput runs (default 100)
  --p99-connections <n>       connections of the SP2-20 latency run (default 10)
  --latency <ms>              upstream latency (default 20)
  --jitter <ms>               upstream jitter, +/- uniform (default 5)
  --cases <list>              ${CASE_NAMES.join(',')} (default all)
  --modes <list>              ${MODE_NAMES.join(',')} (default both)
  --warmup <s>                warm-up before each run (default 1)
  --upstream-connections <n>  undici pool size of gateway and raw proxy (default 64)
  --cache-ttl <s>             CACHE_TTL_SECONDS of the cached gateway (default 3600)
  --gateway-env NAME=VALUE    extra gateway environment, repeatable (e.g. to try a setting)
  --gateway-flag=<flag>       extra node flag of the gateway, repeatable (e.g. --gateway-flag=--trace-gc)
  --redis                     also start a redis-server (loopback, pinned with the upstream)
                              and give each gateway REDIS_URL to a database of its own;
                              the report names the mode and whether the gateways connected
  --no-pin                    run every process unpinned (default: pinned with taskset when
                              the machine has two CPUs or more)
  --keep-logs                 keep the processes' logs (the directory is printed at the end)
  --same-url                  uncached runs repeat one URL instead of a distinct NPWP
                              per request (then the gateway coalesces identical lookups)
  --out <file>                markdown report (default docs/reports/benchmarks.md)
  --quick                     --duration 1 --rounds 1 --warmup 0.5 (explicit flags win)
  --no-build                  do not run npm run build first
  --source                    run the gateway from src/ with tsx (implies --no-build)
  --no-profile                skip the CPU profile of the gateway
  --no-references             skip the reference servers (measured by default beside every
                              pair: \`buffer\` reads the answer whole and sends it back,
                              \`parse\` also parses and re-serializes it, \`cache\` sends
                              kept bytes again; they give the targets' floors), and the
                              hand-written peer the targets compare the gateway to
  --no-container              skip the container case (the gateway with the heap Node picks
                              under the Kubernetes memory limit and the ConfigMap's
                              settings, after each uncached BL and SP2-500 pair)
  --references                measure them (the default; kept for older command lines)
  --profile-case <case>       the case of the CPU profile (default sp2-500)
  --profile-mode <mode>       uncached (default) or cached
  --profile-out <file>        keep that .cpuprofile (for Chrome DevTools / speedscope)
  --rate <req/s>              offer this many requests per second in every run instead
                              of as many as the connections carry (default 0, as many)
  --fill <s>                  --stages: seconds of load each variant gets before its warm-up,
                              as fast as the connections go, so that its lookup cache is
                              full (the steady state) when the rounds start (default 20)
  --stages                    instead of the targets: the CPU per request each stage of an
                              uncached lookup costs, one gateway per stage with that stage
                              taken out (bench/stages/), of the first case of --cases
                              (default bl): each variant after --fill and a warm-up run,
                              then once a round, 3 rounds of 5 s, 256 connections and 256
                              hub connections unless given (the server CPU saturated);
                              --out default docs/reports/stage-costs.md)
  --help`

function number (name: string, raw: string | undefined, fallback: number, { integer = false, min = 0 } = {}): number {
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
    throw new Error(`--${name} must be ${integer ? 'an integer' : 'a number'} >= ${min}, got ${JSON.stringify(raw)}`)
  }
  return value
}

function list<T extends string> (name: string, raw: string | undefined, allowed: readonly T[]): T[] {
  if (raw === undefined) return [...allowed]
  const items = raw.split(',').map(s => s.trim()).filter(s => s !== '')
  for (const item of items) {
    if (!(allowed as readonly string[]).includes(item)) throw new Error(`--${name}: unknown ${JSON.stringify(item)} (allowed: ${allowed.join(', ')})`)
  }
  if (items.length === 0) throw new Error(`--${name} is empty`)
  return allowed.filter(a => items.includes(a))
}

export function parseOptions (argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    allowPositionals: false,
    options: {
      duration: { type: 'string' },
      requests: { type: 'string' },
      rounds: { type: 'string' },
      connections: { type: 'string' },
      'p99-connections': { type: 'string' },
      latency: { type: 'string' },
      jitter: { type: 'string' },
      cases: { type: 'string' },
      modes: { type: 'string' },
      warmup: { type: 'string' },
      'upstream-connections': { type: 'string' },
      'cache-ttl': { type: 'string' },
      out: { type: 'string' },
      quick: { type: 'boolean', default: false },
      'same-url': { type: 'boolean', default: false },
      'gateway-env': { type: 'string', multiple: true },
      'gateway-flag': { type: 'string', multiple: true },
      'keep-logs': { type: 'boolean', default: false },
      'no-build': { type: 'boolean', default: false },
      source: { type: 'boolean', default: false },
      'no-profile': { type: 'boolean', default: false },
      references: { type: 'boolean', default: false },
      'no-references': { type: 'boolean', default: false },
      'no-pin': { type: 'boolean', default: false },
      'no-container': { type: 'boolean', default: false },
      redis: { type: 'boolean', default: false },
      'profile-out': { type: 'string' },
      'profile-case': { type: 'string' },
      'profile-mode': { type: 'string' },
      stages: { type: 'boolean', default: false },
      rate: { type: 'string' },
      fill: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false }
    }
  })
  const quick = values.quick === true
  const stages = values.stages === true
  if (values.references === true && values['no-references'] === true) throw new Error('--references and --no-references contradict each other')
  const integer = { integer: true, min: 1 }
  const connections = number('connections', values.connections, stages ? 256 : 100, integer)
  const p99Connections = number('p99-connections', values['p99-connections'], 10, integer)
  const requests = number('requests', values.requests, 0, { integer: true })
  // autocannon gives each connection its share of the requests: at least one.
  const most = Math.max(connections, p99Connections)
  if (requests > 0 && requests < most) {
    throw new Error(`--requests must be 0 or at least ${most}, a run's connections: ${requests}`)
  }
  return {
    duration: number('duration', values.duration, quick ? 1 : stages ? 5 : 10, { min: 0.5 }),
    requests,
    rounds: number('rounds', values.rounds, quick ? 1 : 3, { integer: true, min: 1 }),
    connections,
    p99Connections,
    latency: number('latency', values.latency, 20),
    jitter: number('jitter', values.jitter, 5),
    cases: list('cases', values.cases, CASE_NAMES),
    modes: list('modes', values.modes, MODE_NAMES),
    // --stages: a process measured once a round sits idle between its runs, and a warm-up of 1 s left it costing more than one measured often (the control row showed it).
    warmup: number('warmup', values.warmup, quick ? 0.5 : stages ? 4 : 1),
    upstreamConnections: number('upstream-connections', values['upstream-connections'], stages ? 256 : 64, { integer: true, min: 1 }),
    cacheTtl: number('cache-ttl', values['cache-ttl'], 3600, { integer: true, min: 1 }),
    sameUrl: values['same-url'] === true,
    gatewayEnv: Object.fromEntries((values['gateway-env'] ?? []).map((pair) => {
      const at = pair.indexOf('=')
      if (at < 1) throw new Error(`--gateway-env takes NAME=VALUE, got ${JSON.stringify(pair)}`)
      if (values.redis === true && pair.slice(0, at) === 'REDIS_URL') throw new Error('--redis sets each gateway\'s REDIS_URL; leave it out of --gateway-env')
      return [pair.slice(0, at), pair.slice(at + 1)]
    })),
    gatewayFlags: (values['gateway-flag'] ?? []).map((flag) => {
      if (!flag.startsWith('--')) throw new Error(`--gateway-flag takes a node flag such as --trace-gc, got ${JSON.stringify(flag)}`)
      return flag
    }),
    keepLogs: values['keep-logs'] === true,
    out: values.out ?? (stages ? 'docs/reports/stage-costs.md' : 'docs/reports/benchmarks.md'),
    build: values['no-build'] !== true && values.source !== true,
    source: values.source === true,
    profile: values['no-profile'] !== true,
    references: values['no-references'] !== true,
    pin: values['no-pin'] !== true,
    container: values['no-container'] !== true,
    redis: values.redis === true,
    profileOut: values['profile-out'],
    profileCase: list('profile-case', values['profile-case'] ?? 'sp2-500', CASE_NAMES)[0] as CaseName,
    profileMode: list('profile-mode', values['profile-mode'] ?? 'uncached', MODE_NAMES)[0] as ModeName,
    fill: number('fill', values.fill, 20),
    rate: number('rate', values.rate, 0, { integer: true }),
    stages,
    help: values.help === true
  }
}
