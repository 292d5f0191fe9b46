import { fileURLToPath } from 'node:url'
import { test } from 'tap'
import { parseOptions } from '../../bench/options.ts'
import { parseCpuList } from '../../bench/pinning.ts'
import { containerSetup } from '../../bench/container.ts'
import {
  evaluateTargets,
  renderReport,
  type Measurement,
  type Pair,
  type PairKind,
  type ReportInput
} from '../../bench/report.ts'
import type { CaseName } from '../../bench/options.ts'
import type { ReferenceMode } from '../../bench/shared.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The bench's verdicts (bench/report.ts) on made-up runs: no load is generated here. */

interface Made {
  rps?: number, us?: number, p99?: number, rssMb?: number, non2xx?: number, overloaded?: number
}

function measurement (
  { rps = 1000, us = 100, p99 = 30, rssMb = 100, non2xx = 0, overloaded = 0 }: Made = {}
): Measurement {
  return {
    ...(overloaded > 0 ? { overloaded } : {}),
    rps,
    p50: 20,
    p99,
    mean: 20,
    ok: rps * 10,
    non2xx,
    errors: 0,
    timeouts: 0,
    statuses: non2xx > 0 ? { 200: rps * 10, 503: non2xx } : { 200: rps * 10 },
    bytesPerResponse: 500,
    durationS: 10,
    peakRssMb: rssMb,
    cpuSeconds: us * rps * 10 / 1e6,
    usPerRequest: us,
    targetCores: 0.5,
    loadCores: 0.4,
    otherCores: 0
  }
}

function pair (
  caseName: CaseName,
  kind: PairKind,
  round: number,
  raw: Made,
  gateway: Made,
  references: Partial<Record<ReferenceMode, Made>> = {}
): Pair {
  const r = measurement(raw)
  const g = measurement(gateway)
  return {
    round,
    caseName,
    kind,
    connections: kind === 'latency' ? 10 : 100,
    order: round % 2 === 1 ? 'raw first' : 'gateway first',
    raw: r,
    gateway: g,
    ratio: g.rps / r.rps,
    cpuRatio: (g.usPerRequest as number) / (r.usPerRequest as number),
    p99Added: g.p99 - r.p99,
    references: Object.entries(references).map(([mode, made]) => ({
      mode: mode as ReferenceMode,
      m: measurement(made)
    }))
  }
}

const CASES = [
  {
    name: 'bl',
    label: 'BL list, 5 entries',
    upstreamBytes: 325,
    gatewayBytes: 369,
    items: 5,
    gatewayPath: '/v1/bl',
    rawPath: '/raw/bl'
  },
  {
    name: 'sp2-20',
    label: 'SP2 list, 20 documents',
    upstreamBytes: 54_000,
    gatewayBytes: 53_000,
    items: 20,
    gatewayPath: '/v1/sp2',
    rawPath: '/raw/sp2'
  },
  {
    name: 'sp2-500',
    label: 'SP2 list, 500 documents',
    upstreamBytes: 1_300_000,
    gatewayBytes: 1_290_000,
    items: 500,
    gatewayPath: '/v1/sp2',
    rawPath: '/raw/sp2'
  }
] as const

function input (pairs: Pair[], argv: string[] = [], extra: Partial<ReportInput> = {}): ReportInput {
  return {
    options: parseOptions(argv),
    command: 'npm run bench',
    date: new Date(0),
    machine: {
      cpu: 'test CPU',
      cpus: 2,
      memoryGb: 4,
      os: 'Linux',
      node: 'v24.0.0',
      loadAverage: [0, 0, 0]
    },
    cases: CASES.map((c) => ({ ...c })),
    cache: { available: true, detail: 'test' },
    pairs,
    lifetimePeaks: {},
    profile: undefined,
    gatewayEntry: 'dist/server.js',
    blSynthesized: 0,
    buildWarning: undefined,
    gatewayCode: 'commit test',
    pinning: {
      pinned: true,
      text: 'with `taskset`: servers on CPU 1, load on CPU 0',
      seen: [{ name: 'gateway', cpus: '1' }]
    },
    clockTicks: 100,
    redis: undefined,
    container: {
      env: { LOG_LEVEL: 'info', PRESSURE_MAX_RSS_BYTES: '440401920' },
      leftOut: "`UPSTREAM_ENV` (the hub's)",
      memoryLimit: '512Mi',
      heapFlags: ['--max-old-space-size=256', '--max-semi-space-size=1'],
      shedLineMb: 420
    },
    ...extra
  }
}

interface Run {
  bl?: number
  sp20?: number
  sp500?: number
  parse20?: number
  cached?: number
  p99Added?: number
  rssMb?: number
  containerBl?: number
  container500?: number
  containerRssMb?: number
}

/**
 * Three rounds of every pair the targets use, with the gateway's CPU per
 * request, the references', the hand-written peer's (BL 130 µs, SP2-20 400 µs,
 * SP2-500 600 µs) and the container's chosen per case.
 */
function fullRun ({
  bl = 120, sp20 = 150, sp500 = 240, parse20 = 300, cached = 70, p99Added = 1.5, rssMb = 240,
  containerBl = 130, container500 = 270, containerRssMb = 300
}: Run = {}): Pair[] {
  const pairs: Pair[] = []
  for (const round of [1, 2, 3]) {
    type Refs = Partial<Record<ReferenceMode, Made>>
    const uncachedRefs = (parseUs: number, peerUs: number): Refs => ({
      buffer: { us: 105, p99: 31, rssMb: 200 },
      parse: { us: parseUs, p99: 33, rssMb: 210 },
      'hand-written': { us: peerUs, p99: 32, rssMb: 220 }
    })
    const blPair = pair('bl', 'uncached', round, { us: 100 }, { us: bl }, uncachedRefs(110, 130))
    blPair.container = measurement({ us: containerBl, rssMb: containerRssMb - 100 })
    pairs.push(blPair)
    pairs.push(pair('bl', 'cached', round, { us: 100 }, { us: cached }, { cache: { us: 20 } }))
    const refs20 = uncachedRefs(parse20, 400)
    pairs.push(pair('sp2-20', 'uncached', round, { us: 100 }, { us: sp20 }, refs20))
    pairs.push(
      pair('sp2-20', 'cached', round, { us: 100 }, { us: cached - 10 }, { cache: { us: 25 } })
    )
    const slower = { us: sp20, p99: 30 + p99Added }
    pairs.push(pair('sp2-20', 'latency', round, { us: 100, p99: 30 }, slower, refs20))
    const refs500 = uncachedRefs(400, 600)
    const big = pair('sp2-500', 'uncached', round, { us: 100 }, { us: sp500, rssMb }, refs500)
    big.container = measurement({ us: container500, rssMb: containerRssMb })
    pairs.push(big)
    pairs.push(
      pair(
        'sp2-500',
        'cached',
        round,
        { us: 100 },
        { us: cached - 20, rssMb: 400 },
        { cache: { us: 30 } }
      )
    )
  }
  return pairs
}

const IN_THE_CONTAINER = 'in the container'
const ROWS = [
  ['BL list, uncached', 'gateway CPU per request ÷ hand-written peer’s', '≤ 1.0'],
  ['SP2 list, 20 documents, uncached', 'gateway CPU per request ÷ hand-written peer’s', '≤ 0.5'],
  ['SP2 list, 500 documents, uncached', 'gateway CPU per request ÷ hand-written peer’s', '≤ 0.5'],
  ['SP2 list, 20 documents, 10 connections', 'p99 added over the raw proxy', '≤ 5 ms'],
  ...['BL list', 'SP2 list, 500 documents'].flatMap(label => {
    const c = `${IN_THE_CONTAINER}, ${label}, 100 connections`
    return [
      [c, '503 OVERLOADED answers (load shed)', 'none'],
      [c, 'peak RSS, against the shed line (`PRESSURE_MAX_RSS_BYTES`)',
        '≤ 378 MiB (90 % of 420 MiB)'],
      [c, 'CPU per request ÷ the unconstrained gateway’s', '≤ 1.2']
    ]
  })
]

test('the targets table: row for row, with measured value, goal and verdict', async (t) => {
  const rows = evaluateTargets(input(fullRun()))
  t.same(rows.map(r => [r.case, r.measure, r.goal]), ROWS)
  t.same(rows.map(r => r.result), ROWS.map(() => 'pass'), 'every goal met')
  t.match(rows[0]?.measured, /^0\.92 \(120 µs against 130 µs; median of 3 rounds\)$/)
  t.match(rows[1]?.measured, /^0\.38 \(150 µs against 400 µs/)
  t.match(rows[2]?.measured, /^0\.40 \(240 µs against 600 µs/)
  t.match(rows[3]?.measured, /^\+1\.5 ms/)
  t.equal(rows[4]?.measured, '0 (3 runs)')
  t.equal(rows[5]?.measured, '200 MiB, 48 % of the shed line (highest of 3 runs)')
  t.match(rows[6]?.measured, /^1\.08 \(130 µs against 120 µs; median of 3 rounds\)$/)
  t.equal(rows[8]?.measured, '300 MiB, 71 % of the shed line (highest of 3 runs)')
  t.ok(rows.every(r => r.floor === undefined), 'a passing row shows no floor')
})

test('a failing row gives the reference servers\' floor for the same work', async (t) => {
  const rows = evaluateTargets(input(fullRun({
    bl: 200,
    sp20: 250,
    sp500: 240,
    parse20: 300,
    cached: 90,
    p99Added: 9,
    containerBl: 300,
    containerRssMb: 400
  })))
  t.same(rows.map(r => r.result),
    ['FAIL', 'FAIL', 'pass', 'FAIL', 'pass', 'pass', 'FAIL', 'pass', 'FAIL', 'pass'])
  t.equal(rows[0]?.floor, '`buffer` 0.81, `parse` 0.85',
    'CPU per request of each reference ÷ the peer\'s')
  t.equal(rows[1]?.floor, '`buffer` 0.26, `parse` 0.75')
  t.equal(rows[2]?.floor, undefined)
  t.equal(rows[3]?.floor, '`buffer` +1.0 ms, `parse` +3.0 ms, `hand-written` +2.0 ms')
  t.match(rows[6]?.measured, /^1\.50 /, 'the container against the gateway of its pair')
  t.match(rows[8]?.measured, /^400 MiB, 95 % of the shed line/)
})

test('a ratio that rounds to its goal is shown with the digit that decides it', async (t) => {
  const verdict = (ratios: number[]) => evaluateTargets(input(ratios.map((r, i) =>
    pair('sp2-500', 'uncached', i + 1, { us: 100 }, { us: 1000 * r },
      { 'hand-written': { us: 1000 } })
  ), ['--cases', 'sp2-500', '--modes', 'uncached']))[2]!
  const over = verdict([0.5004, 0.5001, 0.2])
  t.equal(over.result, 'FAIL', 'just over the goal fails')
  t.match(over.measured, /^0\.500 /, 'and says 0.500 (three decimals), not 0.50')
  const under = verdict([0.4996, 0.4997, 0.9])
  t.equal(under.result, 'pass', 'just under passes')
  t.match(under.measured, /^0\.500 /)
  const clear = verdict([0.6, 0.7, 0.8])
  t.equal(clear.result, 'FAIL')
  t.match(clear.measured, /^0\.70 /, 'two decimals when they are enough')
})

test('a round with non-2xx answers cannot pass its target', async (t) => {
  const pairs = fullRun()
  const first = pairs.find(p => p.caseName === 'bl' && p.kind === 'uncached')!
  first.gateway = measurement({ us: 120, non2xx: 5 })
  const [bl] = evaluateTargets(input(pairs))
  t.equal(bl?.result, 'FAIL')
  t.match(bl?.note, /1 of 3 rounds had non-2xx answers \(503\)/)

  const shed = fullRun()
  const big = shed.find(p => p.caseName === 'sp2-500' && p.kind === 'uncached')!
  big.container = measurement({ us: 250, non2xx: 600, overloaded: 600 })
  const rows = evaluateTargets(input(shed))
  t.equal(rows[7]?.result, 'FAIL', 'a container that shed load fails its row')
  t.equal(rows[7]?.measured, '600 (3 runs)')
  t.match(rows[7]?.note, /1 of 3 runs had 600 non-2xx \(600×503\); see "In the container"/)
  t.equal(rows[9]?.result, 'FAIL', 'and its CPU row, whatever its ratio')
})

test('without the reference servers the targets against the peer are not judged', async (t) => {
  const pairs = fullRun({ bl: 200 }).map(p => ({ ...p, references: [] }))
  const rows = evaluateTargets(input(pairs, ['--no-references']))
  t.same(rows.slice(0, 3).map(r => [r.result, r.measured]),
    [0, 1, 2].map(() => ['n/a', 'not measured (`--no-references`)']))
  t.equal(rows[3]?.result, 'pass', 'the p99 row is against the raw proxy')
})

test('rows of cases not run are n/a, and so are the container\'s without it', async (t) => {
  const blOnly = evaluateTargets(
    input(
      fullRun().filter((p) => p.caseName === 'bl'),
      ['--cases', 'bl']
    )
  )
  t.same(blOnly.map(r => r.result),
    ['pass', 'n/a', 'n/a', 'n/a', 'pass', 'pass', 'pass', 'n/a', 'n/a', 'n/a'])
  t.same(blOnly.filter(r => r.result === 'n/a').map(r => r.measured), Array(6).fill('not run'))
  const without = fullRun().map(p => ({ ...p, container: undefined }))
  const rows = evaluateTargets(input(without, ['--no-container'], { container: undefined }))
  t.same(rows.slice(4).map(r => [r.result, r.measured]),
    Array(6).fill(['n/a', 'not run (`--no-container`)']))
})

test('unpinned, the CPU ratios are shown but not judged; latency and memory still ' +
  'are', async (t) => {
  const rows = evaluateTargets(
    input(fullRun({ bl: 200 }), ['--no-pin'], {
      pinning: { pinned: false, text: 'not pinned (`--no-pin`)', seen: [] }
    })
  )
  t.same(
    rows.map((r) => r.result),
    ['n/a', 'n/a', 'n/a', 'pass', 'pass', 'pass', 'n/a', 'pass', 'pass', 'n/a']
  )
  t.match(rows[0]?.measured, /^1\.54 \(200 µs against 130 µs/, 'the value is still shown')
  t.match(rows[0]?.note, /not pinned, so not judged/)
  t.equal(rows[0]?.floor, undefined)
})

test('the report names the pinning, the mode, the CPU time and where the run departs from the ' +
  "targets' conditions", async (t) => {
  const pinned = renderReport(input(fullRun()))
  t.match(
    pinned,
    /\*\*Pinning:\*\* with `taskset`: servers on CPU 1, load on CPU 0; `Cpus_allowed_list` as read: gateway 1/
  )
  t.match(pinned, /\*\*Mode:\*\* memory/)
  t.match(pinned, /\*\*CPU time:\*\* utime \+ stime .* ticks of 1\/100 s/)
  t.notMatch(pinned, /departs from those conditions/)
  t.match(
    pinned,
    /\| BL list, 5 entries \| uncached \| 100 \| 100 µs \| 120 µs \| \*\*1\.20\*\* \| 1\.20, 1\.20, 1\.20 \| 1\.00 \|/,
    'CPU per request with the req/s ratio beside it'
  )
  const peer = /\| BL list, 5 entries \| uncached \| 100 \| .* \| 1\.00 \| 130 µs \| \*\*0\.92\*\*/
  t.match(pinned, peer, 'and against the hand-written peer')
  t.match(
    pinned,
    /\| BL list, 5 entries \| cached \| 100 \| .* \| 130 µs \| \*\*0\.54\*\* \|/,
    'a cached row against the peer of the uncached pair of its round'
  )
  t.match(pinned, /\| BL list, 5 entries \| uncached \| hand-written peer \| 130 µs \|/)
  const container = pinned.split('\n## In the container\n')[1]?.split('\n## ')[0] ?? ''
  t.match(container, /`--max-old-space-size=256` `--max-semi-space-size=1`/, 'the heap it ran with')
  t.match(container, /`LOG_LEVEL=info`, `PRESSURE_MAX_RSS_BYTES=440401920`/, 'its settings')
  t.match(container, /\| 1 \| SP2 list, 500 documents \| 1,000 \| 20\.0 \/ 30\.0 \| 270 µs \| /)
  t.match(container, /\| 240 µs \| 1\.13 \| 300 MiB \| 71 % \| 0 \| none \|/, 'ratio, RSS, shed')

  const unpinned = renderReport(
    input(fullRun(), ['--rounds', '1', '--no-pin'], {
      pinning: { pinned: false, text: 'not pinned (`--no-pin`)', seen: [] },
      redis: {
        version: '7.0.15',
        urls: { gateway: 'redis://127.0.0.1:6379/1' },
        activity: { connections: 0, commands: 0 }
      }
    })
  )
  t.match(
    unpinned,
    /This run departs from those conditions: not pinned \(`--no-pin`\); 1 round \(a median needs three or more\)\./
  )
  t.match(
    unpinned,
    /\*\*Mode:\*\* Redis: redis-server 7\.0\.15 .*REDIS_URL gateway `redis:\/\/127\.0\.0\.1:6379\/1`; \*\*the gateways never connected to it\*\*/
  )
  const used = renderReport(
    input(fullRun(), [], {
      redis: {
        version: '7.0.15',
        urls: { gateway: 'redis://127.0.0.1:6379/1' },
        activity: { connections: 2, commands: 1234 }
      }
    })
  )
  t.match(used, /the gateways opened 2 connections and sent 1,234 commands/)
})

test('options: pinning and the references are on unless turned off; --redis leaves REDIS_URL to ' +
  'the bench', async (t) => {
  const defaults = parseOptions([])
  t.equal(defaults.pin, true)
  t.equal(defaults.references, true)
  t.equal(defaults.redis, false)
  t.equal(defaults.out, 'docs/reports/benchmarks.md', 'the report goes to docs/reports/')
  t.equal(parseOptions(['--stages']).out, 'docs/reports/stage-costs.md')
  t.equal(parseOptions(['--no-pin']).pin, false)
  t.equal(defaults.container, true)
  t.equal(parseOptions(['--no-container']).container, false)
  t.equal(parseOptions(['--no-references']).references, false)
  t.equal(parseOptions(['--references']).references, true)
  t.throws(() => parseOptions(['--references', '--no-references']), /contradict/)
  t.same(parseOptions(['--redis', '--gateway-env', 'LOG_LEVEL=info']).gatewayEnv, {
    LOG_LEVEL: 'info'
  })
  t.throws(
    () => parseOptions(['--redis', '--gateway-env', 'REDIS_URL=redis://elsewhere']),
    /--redis sets each gateway's REDIS_URL/
  )
})

test('options: --requests bounds each run by a count, at least one a connection', async (t) => {
  t.equal(parseOptions([]).requests, 0, 'unless given, a run lasts --duration')
  t.equal(parseOptions(['--requests', '500']).requests, 500)
  t.throws(() => parseOptions(['--requests', '50']), /--requests must be 0 or at least 100, /)
  t.throws(() => parseOptions(['--requests', '1.5']), /--requests must be an integer/)
  const settings = (argv: string[]) =>
    /\*\*Settings:\*\* [^\n]*/.exec(renderReport(input(fullRun(), argv)))?.[0]
  t.match(settings(['--requests', '2000']), /; 2,000 requests per run after 1 s of warm-up;/)
  t.match(settings([]), /; 10 s per run after 1 s of warm-up;/)
})

test('the container case takes the manifests\' limit and ConfigMap, less the hub\'s', async (t) => {
  const setup = await containerSetup(ROOT, 9999)
  t.equal(setup.memoryLimit, '512Mi')
  t.same(setup.heapFlags, ['--max-old-space-size=256'],
    'the old space Node picks; the semi-space is the one NODE_OPTIONS sets')
  t.equal(setup.env.NODE_OPTIONS, '--max-semi-space-size=16', 'the ConfigMap\'s NODE_OPTIONS')
  t.equal(setup.env.LOG_LEVEL, 'info', 'the ConfigMap\'s log level')
  t.equal(setup.env.METRICS_PORT, '9999', 'the metrics port the bench gives')
  t.equal(setup.shedLineMb, 420, 'PRESSURE_MAX_RSS_BYTES, in MiB')
  t.same(Object.keys(setup.env).filter(name => name.startsWith('UPSTREAM_')), [], 'no hub settings')
})

test('CPU lists as the kernel writes them', async (t) => {
  t.same(parseCpuList('0-1'), [0, 1])
  t.same(parseCpuList('0,2-4,7\n'), [0, 2, 3, 4, 7])
  t.same(parseCpuList('3'), [3])
})
