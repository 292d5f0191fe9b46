import { test } from 'tap'
import { parseOptions } from '../bench/options.ts'
import { parseCpuList } from '../bench/pinning.ts'
import { evaluateTargets, renderReport, type Measurement, type Pair, type PairKind, type ReportInput } from '../bench/report.ts'
import type { CaseName } from '../bench/options.ts'
import type { ReferenceMode } from '../bench/shared.ts'

/** The bench's verdicts (bench/report.ts) on made-up runs: no load is generated here. */

interface Made { rps?: number, us?: number, p99?: number, rssMb?: number, non2xx?: number }

function measurement ({ rps = 1000, us = 100, p99 = 30, rssMb = 100, non2xx = 0 }: Made = {}): Measurement {
  return {
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

function pair (caseName: CaseName, kind: PairKind, round: number, raw: Made, gateway: Made, references: Partial<Record<ReferenceMode, Made>> = {}): Pair {
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
    references: Object.entries(references).map(([mode, made]) => ({ mode: mode as ReferenceMode, m: measurement(made) }))
  }
}

const CASES = [
  { name: 'bl', label: 'BL list, 5 entries', upstreamBytes: 325, gatewayBytes: 369, items: 5, gatewayPath: '/v1/bl', rawPath: '/raw/bl' },
  { name: 'sp2-20', label: 'SP2 list, 20 documents', upstreamBytes: 54_000, gatewayBytes: 53_000, items: 20, gatewayPath: '/v1/sp2', rawPath: '/raw/sp2' },
  { name: 'sp2-500', label: 'SP2 list, 500 documents', upstreamBytes: 1_300_000, gatewayBytes: 1_290_000, items: 500, gatewayPath: '/v1/sp2', rawPath: '/raw/sp2' }
] as const

function input (pairs: Pair[], argv: string[] = [], extra: Partial<ReportInput> = {}): ReportInput {
  return {
    options: parseOptions(argv),
    command: 'npm run bench',
    date: new Date(0),
    machine: { cpu: 'test CPU', cpus: 2, memoryGb: 4, os: 'Linux', node: 'v24.0.0', loadAverage: [0, 0, 0] },
    cases: CASES.map(c => ({ ...c })),
    cache: { available: true, detail: 'test' },
    pairs,
    lifetimePeaks: {},
    profile: undefined,
    gatewayEntry: 'dist/server.js',
    blSynthesized: 0,
    buildWarning: undefined,
    gatewayCode: 'commit test',
    pinning: { pinned: true, text: 'with `taskset`: servers on CPU 1, load on CPU 0', seen: [{ name: 'gateway', cpus: '1' }] },
    clockTicks: 100,
    redis: undefined,
    ...extra
  }
}

/** Three rounds of every pair the targets use, with the gateway's CPU per request and the references' chosen per case. */
function fullRun ({ bl = 120, sp20 = 150, sp500 = 240, parse20 = 300, cached = 70, p99Added = 1.5, rssMb = 240 } = {}): Pair[] {
  const pairs: Pair[] = []
  for (const round of [1, 2, 3]) {
    const uncachedRefs = (parseUs: number): Partial<Record<ReferenceMode, Made>> => ({ buffer: { us: 105, p99: 31, rssMb: 200 }, parse: { us: parseUs, p99: 33, rssMb: 210 } })
    pairs.push(pair('bl', 'uncached', round, { us: 100 }, { us: bl }, uncachedRefs(110)))
    pairs.push(pair('bl', 'cached', round, { us: 100 }, { us: cached }, { cache: { us: 20 } }))
    pairs.push(pair('sp2-20', 'uncached', round, { us: 100 }, { us: sp20 }, uncachedRefs(parse20)))
    pairs.push(pair('sp2-20', 'cached', round, { us: 100 }, { us: cached - 10 }, { cache: { us: 25 } }))
    pairs.push(pair('sp2-20', 'latency', round, { us: 100, p99: 30 }, { us: sp20, p99: 30 + p99Added }, uncachedRefs(parse20)))
    pairs.push(pair('sp2-500', 'uncached', round, { us: 100 }, { us: sp500, rssMb }, uncachedRefs(400)))
    pairs.push(pair('sp2-500', 'cached', round, { us: 100 }, { us: cached - 20, rssMb: 400 }, { cache: { us: 30 } }))
  }
  return pairs
}

test('the targets table is issue 19\'s, row for row, with measured value, goal and verdict', async (t) => {
  const rows = evaluateTargets(input(fullRun()))
  t.same(rows.map(r => [r.case, r.measure, r.goal]), [
    ['BL list, uncached', 'gateway CPU per request ÷ raw proxy’s', '≤ 1.3'],
    ['SP2 list, 20 documents, uncached', 'gateway CPU per request ÷ raw proxy’s', '≤ 1.6'],
    ['SP2 list, 500 documents, uncached', 'gateway CPU per request ÷ raw proxy’s', '≤ 2.5'],
    ['SP2 list, 20 documents, uncached', 'gateway CPU per request ÷ `parse` reference’s', '≤ 0.6'],
    ['any cached lookup', 'gateway CPU per request ÷ raw proxy’s', '≤ 0.8'],
    ['SP2 list, 20 documents, 10 connections', 'p99 added over the raw proxy', '≤ 2 ms'],
    ['SP2 list, 500 documents, 100 connections', 'gateway peak RSS, default configuration', '< 250 MB']
  ])
  t.same(rows.map(r => r.result), ['pass', 'pass', 'pass', 'pass', 'pass', 'pass', 'pass'], 'every goal met')
  t.match(rows[0]?.measured, /^1\.20 \(120 µs against 100 µs; median of 3 rounds\)$/)
  t.match(rows[3]?.measured, /^0\.50 \(150 µs against 300 µs/)
  t.match(rows[4]?.measured, /^0\.70 \(the highest: BL 0\.70, SP2-20 0\.60, SP2-500 0\.50/)
  t.match(rows[5]?.measured, /^\+1\.5 ms/)
  t.match(rows[6]?.measured, /^240 MB \(highest of 3 runs\)$/, 'the uncached runs only: the cached gateway\'s 400 MB is not the default configuration')
  t.ok(rows.every(r => r.floor === undefined), 'a passing row shows no floor')
})

test('a failing row gives the reference servers\' floor for the same work', async (t) => {
  const rows = evaluateTargets(input(fullRun({ bl: 200, sp20: 250, sp500: 240, parse20: 300, cached: 90, p99Added: 9, rssMb: 290 })))
  t.same(rows.map(r => r.result), ['FAIL', 'FAIL', 'pass', 'FAIL', 'FAIL', 'FAIL', 'FAIL'])
  t.equal(rows[0]?.floor, '`buffer` 1.05, `parse` 1.10', 'CPU per request of each reference ÷ the raw proxy\'s')
  t.equal(rows[1]?.floor, '`buffer` 1.05, `parse` 3.00')
  t.equal(rows[2]?.floor, undefined)
  t.equal(rows[3]?.floor, '`buffer` ÷ `parse` 0.35', 'below parse, the floor is a server that does not parse')
  t.equal(rows[4]?.floor, 'BL `cache` 0.20; SP2-20 `cache` 0.25; SP2-500 `cache` 0.30')
  t.equal(rows[5]?.floor, '`buffer` +1.0 ms, `parse` +3.0 ms')
  t.equal(rows[6]?.floor, '`buffer` 200 MB, `parse` 210 MB (no cache)')
})

test('a ratio that rounds to its goal is shown with the digit that decides it', async (t) => {
  const verdict = (ratios: number[]) => evaluateTargets(input(ratios.map((r, i) => pair('sp2-500', 'uncached', i + 1, { us: 1000 }, { us: 1000 * r })), ['--cases', 'sp2-500', '--modes', 'uncached']))[2]!
  const over = verdict([2.5004, 2.5001, 2.2])
  t.equal(over.result, 'FAIL', 'just over the goal fails')
  t.match(over.measured, /^2\.500 /, 'and says 2.500 (three decimals), not 2.50')
  const under = verdict([2.4996, 2.4997, 2.9])
  t.equal(under.result, 'pass', 'just under passes')
  t.match(under.measured, /^2\.500 /)
  const clear = verdict([2.6, 2.7, 2.8])
  t.equal(clear.result, 'FAIL')
  t.match(clear.measured, /^2\.70 /, 'two decimals when they are enough')
})

test('a round with non-2xx answers cannot pass its target', async (t) => {
  const pairs = fullRun()
  const first = pairs.find(p => p.caseName === 'bl' && p.kind === 'uncached')!
  first.gateway = measurement({ us: 120, non2xx: 5 })
  const [bl] = evaluateTargets(input(pairs))
  t.equal(bl?.result, 'FAIL')
  t.match(bl?.note, /1 of 3 rounds had non-2xx answers \(503\)/)

  const shed = fullRun()
  const big = shed.find(p => p.caseName === 'sp2-500' && p.kind === 'cached')!
  big.gateway = measurement({ us: 50, non2xx: 600 })
  const cached = evaluateTargets(input(shed))[4]
  t.equal(cached?.result, 'FAIL', 'a cached lookup that shed load fails the row, whatever its ratio')
  t.match(cached?.note, /1 of 9 runs had non-2xx answers \(503\)/)
  t.match(cached?.floor, /^BL `cache` 0\.20/, 'and gives the floor')
})

test('without the reference servers the parse row is not judged and a miss says why it has no floor', async (t) => {
  const pairs = fullRun({ bl: 200 }).map(p => ({ ...p, references: [] }))
  const rows = evaluateTargets(input(pairs, ['--no-references']))
  t.equal(rows[0]?.result, 'FAIL')
  t.equal(rows[0]?.floor, 'not measured (`--no-references`)')
  t.equal(rows[3]?.result, 'n/a')
  t.equal(rows[3]?.measured, 'not measured (`--no-references`)')
})

test('rows of cases not run are n/a, and RSS with settings beside the defaults is not judged', async (t) => {
  const blOnly = evaluateTargets(input(fullRun().filter(p => p.caseName === 'bl'), ['--cases', 'bl']))
  t.same(blOnly.map(r => r.result), ['pass', 'n/a', 'n/a', 'n/a', 'pass', 'n/a', 'n/a'])
  t.same(blOnly.filter(r => r.result === 'n/a').map(r => r.measured), ['not run', 'not run', 'not run', 'not run', 'not run'])
  const other = evaluateTargets(input(fullRun(), ['--gateway-env', 'CACHE_MAX_BYTES=0']))[6]
  t.equal(other?.result, 'n/a')
  t.match(other?.note, /not the default configuration \(`CACHE_MAX_BYTES=0`\)/)
})

test('unpinned, the CPU ratios are shown but not judged; latency and memory still are', async (t) => {
  const rows = evaluateTargets(input(fullRun({ bl: 200 }), ['--no-pin'], { pinning: { pinned: false, text: 'not pinned (`--no-pin`)', seen: [] } }))
  t.same(rows.map(r => r.result), ['n/a', 'n/a', 'n/a', 'n/a', 'n/a', 'pass', 'pass'])
  t.match(rows[0]?.measured, /^2\.00 \(200 µs against 100 µs/, 'the value is still shown')
  t.match(rows[0]?.note, /not pinned, so not judged/)
  t.equal(rows[0]?.floor, undefined)
})

test('the report names the pinning, the mode, the CPU time and where the run departs from the targets\' conditions', async (t) => {
  const pinned = renderReport(input(fullRun()))
  t.match(pinned, /\*\*Pinning:\*\* with `taskset`: servers on CPU 1, load on CPU 0; `Cpus_allowed_list` as read: gateway 1/)
  t.match(pinned, /\*\*Mode:\*\* memory/)
  t.match(pinned, /\*\*CPU time:\*\* utime \+ stime .* ticks of 1\/100 s/)
  t.notMatch(pinned, /departs from those conditions/)
  t.match(pinned, /\| BL list, 5 entries \| uncached \| 100 \| 100 µs \| 120 µs \| \*\*1\.20\*\* \| 1\.20, 1\.20, 1\.20 \| 1\.00 \|/, 'CPU per request with the req/s ratio beside it')

  const unpinned = renderReport(input(fullRun(), ['--rounds', '1', '--no-pin'], {
    pinning: { pinned: false, text: 'not pinned (`--no-pin`)', seen: [] },
    redis: { version: '7.0.15', urls: { gateway: 'redis://127.0.0.1:6379/1' }, activity: { connections: 0, commands: 0 } }
  }))
  t.match(unpinned, /This run departs from those conditions: not pinned \(`--no-pin`\); 1 round \(a median needs three or more\)\./)
  t.match(unpinned, /\*\*Mode:\*\* Redis: redis-server 7\.0\.15 .*REDIS_URL gateway `redis:\/\/127\.0\.0\.1:6379\/1`; \*\*the gateways never connected to it\*\*/)
  const used = renderReport(input(fullRun(), [], { redis: { version: '7.0.15', urls: { gateway: 'redis://127.0.0.1:6379/1' }, activity: { connections: 2, commands: 1234 } } }))
  t.match(used, /the gateways opened 2 connections and sent 1,234 commands/)
})

test('options: pinning and the references are on unless turned off; --redis leaves REDIS_URL to the bench', async (t) => {
  const defaults = parseOptions([])
  t.equal(defaults.pin, true)
  t.equal(defaults.references, true)
  t.equal(defaults.redis, false)
  t.equal(parseOptions(['--no-pin']).pin, false)
  t.equal(parseOptions(['--no-references']).references, false)
  t.equal(parseOptions(['--references']).references, true)
  t.throws(() => parseOptions(['--references', '--no-references']), /contradict/)
  t.same(parseOptions(['--redis', '--gateway-env', 'LOG_LEVEL=info']).gatewayEnv, { LOG_LEVEL: 'info' })
  t.throws(() => parseOptions(['--redis', '--gateway-env', 'REDIS_URL=redis://elsewhere']), /--redis sets each gateway's REDIS_URL/)
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

test('CPU lists as the kernel writes them', async (t) => {
  t.same(parseCpuList('0-1'), [0, 1])
  t.same(parseCpuList('0,2-4,7\n'), [0, 2, 3, 4, 7])
  t.same(parseCpuList('3'), [3])
})
