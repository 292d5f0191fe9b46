import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'tap'

// The benchmark is not part of `npm test`; this only checks that the bench
// script starts its processes, pins them, and writes its tables of numbers
// on a tiny run: a fixed number of requests per run, not a number of seconds,
// so that a busy machine makes it slower, not different. Nothing here judges
// a figure: only that each was measured.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

interface Run { code: number | null, stdout: string, stderr: string }

async function runBench (args: string[], timeoutMs: number): Promise<Run> {
  // No test-runner loaders or coverage hooks in the bench and its children.
  const env = { ...process.env }
  delete env.NODE_OPTIONS
  delete env.NODE_V8_COVERAGE
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/run.ts'), ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  // SIGINT lets the bench stop its own children before exiting.
  const timer = setTimeout(() => child.kill('SIGINT'), timeoutMs)
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)))
  clearTimeout(timer)
  return { code, stdout, stderr }
}

/** The cells of a markdown table row. */
const cells = (line: string): string[] => line.split('|').slice(1, -1).map(cell => cell.trim())

/** The text of a report section, up to the next one. */
const section = (markdown: string, heading: string): string =>
  (markdown.split(`\n## ${heading}`)[1] ?? '').split('\n## ')[0] ?? ''

/** The data rows of the tables in `text` whose first cell matches `first`. */
const rowsOf = (text: string, first: RegExp): string[][] =>
  text
    .split('\n')
    .filter(
      (line) => line.startsWith('|') && !line.startsWith('| ---') && !line.startsWith('| :--')
    )
    .map(cells)
    .filter((row) => first.test(row[0] ?? ''))

const number = (cell: string | undefined): number =>
  Number((cell ?? '').replaceAll(',', '').replaceAll('*', '').split(' ')[0])

// Guards against a hang, not judgements of speed: on a quiet machine the run takes about 30 s.
const BENCH_GUARD_MS = 540_000

test('npm run bench: a short pinned round produces the CPU, targets and reference tables', {
  timeout: BENCH_GUARD_MS + 30_000
}, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'bench-smoke-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const out = join(dir, 'benchmarks.md')

  // 200 requests a run, no warm-up; the gateway as built (dist/, kept current by tap's before
  // step). Run inside the whole suite, beside other files' processes: a Redis command may wait
  // longer than the production timeout there, and a gateway that calls Redis down answers 503s
  // that measure nothing, hence the longest command timeout the gateway accepts.
  const run = await runBench(['--quick', '--requests', '200', '--warmup', '0', '--no-build',
    '--cases', 'bl,sp2-20', '--no-profile', '--redis',
    '--gateway-env', 'REDIS_COMMAND_TIMEOUT_MS=10000', '--out', out], BENCH_GUARD_MS)
  t.equal(run.code, 0, `bench exits 0\n${run.stderr.slice(-3000)}`)

  const markdown = await readFile(out, 'utf8')
  t.match(markdown, /^# Benchmarks/, 'title')
  t.match(markdown, /\*\*Node:\*\* v\d+\.\d+\.\d+/, 'Node version')
  t.match(markdown, /\*\*Machine:\*\* .+ × \d+/, 'machine')
  t.match(markdown, /\*\*Command:\*\* `.*bench\/run\.ts --quick/, 'command')
  t.match(markdown, /run from `dist\/server\.js`/, 'the gateway as built')
  t.match(markdown, /\*\*Settings:\*\* .*; 200 requests per run after 0 s of warm-up;/, 'by count')
  t.match(markdown, /\*\*Response cache:\*\* /, 'says whether the cache was measured')
  t.match(
    markdown,
    /\*\*CPU time:\*\* utime \+ stime of each server's `\/proc\/<pid>\/stat` .* ticks of 1\/\d+ s/,
    'says how CPU time is read'
  )
  t.ok(run.stdout.includes('## Targets'), 'the report is printed too')

  // Pinned wherever the bench may use two CPUs (CI's machines and this one); otherwise the report
  // says why not.
  const pinning = /\*\*Pinning:\*\* (.*)/.exec(markdown)?.[1] ?? ''
  if (availableParallelism() >= 2) {
    const cpus = /on CPU (\d+), one measured at a time; the load generator .* on CPU (\d+);/.exec(
      pinning
    )
    t.ok(cpus !== null && cpus[1] !== cpus[2], `servers and load side on two CPUs: ${pinning}`)
    const [, server, load] = cpus ?? []
    const servers = ['raw-proxy', 'gateway', 'gateway-cached', 'gateway-container',
      'reference-buffer', 'reference-parse', 'reference-hand-written', 'reference-cache']
    for (const name of servers) {
      t.ok(
        pinning.includes(` ${name} ${server ?? '?'}`),
        `${name}'s threads all on CPU ${server ?? '?'}, as read from /proc`
      )
    }
    for (const name of ['bench ' +
      '(autocannon)', 'upstream', 'redis']) {
      t.ok(pinning.includes(`${name} ` +
      `${load ?? '?'}`), `${name} ` +
      `on CPU ${load ?? '?'}`)
    }
  } else {
    t.match(pinning, /^not pinned: /, 'one CPU: unpinned, and said')
  }
  // --redis: the mode is named, with each gateway's REDIS_URL and whether they used it.
  const redisUrl = (name: string, db: number): string =>
    `${name} \`redis://127\\.0\\.0\\.1:\\d+/${db}\``
  const used = '(\\*\\*the gateways never connected|the gateways opened \\d+ connection)'
  const urls = [
    redisUrl('gateway', 1), redisUrl('gateway-cached', 2), redisUrl('gateway-container', 3)
  ]
  const mode = `\\*\\*Mode:\\*\\* Redis: redis-server \\S+ .*REDIS_URL ${urls.join(', ')}; ${used}`
  t.match(markdown, new RegExp(mode), 'Redis mode')

  // The performance targets, each row measured and judged, except the SP2-500 rows (not run).
  const targets = rowsOf(section(markdown, 'Targets'), /./).slice(1)
  const perPeer = 'gateway CPU per request ÷ hand-written peer’s'
  const inContainer = (label: string): string[] => [
    `in the container, ${label}, 100 connections | 503 OVERLOADED answers (load shed) | none`,
    `in the container, ${label}, 100 connections | peak RSS, against the shed line ` +
      '(`PRESSURE_MAX_RSS_BYTES`) | ≤ 378 MiB (90 % of 420 MiB)',
    `in the container, ${label}, 100 connections | CPU per request ÷ the unconstrained ` +
      'gateway’s | ≤ 1.2'
  ]
  t.same(targets.map(([c, measure, , goal]) => `${c ?? ''} | ${measure ?? ''} | ${goal ?? ''}`), [
    `BL list, uncached | ${perPeer} | ≤ 1.0`,
    `SP2 list, 20 documents, uncached | ${perPeer} | ≤ 0.5`,
    `SP2 list, 500 documents, uncached | ${perPeer} | ≤ 0.5`,
    'SP2 list, 20 documents, 10 connections | p99 added over the raw proxy | ≤ 5 ms',
    ...inContainer('BL list'),
    ...inContainer('SP2 list, 500 documents')
  ], 'the rows of the targets')
  const pinned = !pinning.startsWith('not pinned')
  for (const [i, row] of targets.entries()) {
    const [c, measure, measured, , result, floor] = row
    if (/SP2 list, 500/.test(c ?? '')) {
      t.same([measured, result], ['not run', 'n/a'], `${c ?? '?'}: not run`)
      continue
    }
    const what = `${c ?? '?'}, ${measure ?? '?'}`
    // The p99 added may be negative; the load shed is a count that may be 0.
    const signed = i === 3 || /OVERLOADED/.test(measure ?? '')
    const value = number(measured)
    t.ok(signed ? Number.isFinite(value) : value > 0, `${what}: measured (${measured ?? ''})`)
    // Unpinned (one CPU), the CPU ratios are shown but not judged.
    const cpu = /CPU per request/.test(measure ?? '')
    if (pinned || !cpu) t.match(result, /^(✅ pass|❌ FAIL)$/, `${what}: judged`)
    else {
      const shown = /not pinned, so not judged/.test(measured ?? '')
      t.same([result, shown], ['n/a', true], `${what}: not judged unpinned`)
    }
    // A miss is never silent: its floor is the reference servers' figure for the same work.
    if (result === '❌ FAIL' && c?.startsWith('in the container') !== true) {
      const given = `${what}: a miss gives its floor (${floor ?? ''})`
      t.match(floor, /`(buffer|parse|hand-written)` /, given)
    }
  }

  // CPU per answered request, gateway against raw proxy, with the req/s ratio beside it.
  const cpu = rowsOf(section(markdown, 'CPU per answered request'), /^(BL|SP2) /)
  t.same(
    cpu.map(([c, mode, conns]) => `${c ?? ''} ${mode ?? ''} ${conns ?? ''}`),
    [
      'BL list, 5 entries uncached 100',
      'BL list, 5 entries cached 100',
      'SP2 list, 20 documents uncached 100',
      'SP2 list, 20 documents cached 100',
      'SP2 list, 20 documents uncached 10'
    ],
    'one row per case, mode and connection count'
  )
  for (const [c, mode, conns, raw, gateway, cpuRatio, , rpsRatio, peer, toPeer] of cpu) {
    const what = `${c ?? '?'} ${mode ?? '?'} @${conns ?? '?'}`
    t.match(raw, /^\d[\d,]* µs$/, `${what}: raw proxy's CPU per request`)
    t.match(gateway, /^\d[\d,]* µs$/, `${what}: gateway's CPU per request`)
    t.ok(
      number(raw) > 0 && number(gateway) > 0,
      `${what}: positive (${raw ?? ''}, ${gateway ?? ''})`
    )
    t.ok(number(cpuRatio) > 0, `${what}: CPU ratio (${cpuRatio ?? ''})`)
    t.ok(number(rpsRatio) > 0, `${what}: req/s ratio (${rpsRatio ?? ''})`)
    // The hand-written peer: beside the uncached pairs, and the cached rows take their round's.
    t.ok(number(peer) > 0 && number(toPeer) > 0, `${what}: against the peer (${peer}, ${toPeer})`)
  }

  // Every run: req/s, latency and each side's CPU per request.
  const runs = rowsOf(section(markdown, 'Every run'), /^\d+$/)
  t.equal(runs.length, 5, 'one row per pair')
  for (const row of runs) {
    const [round, label, mode, conns, , rawRps, rawLatency, gwRps, gwLatency, ratio, perRequest] =
      row
    const what = `${label ?? '?'} ${mode ?? '?'} @${conns ?? '?'}`
    t.equal(round, '1', `${what}: round`)
    t.ok(
      number(rawRps) > 0 && number(gwRps) > 0,
      `${what}: req/s (${rawRps ?? ''}, ${gwRps ?? ''})`
    )
    t.match(rawLatency, /^\d+\.\d \/ \d+\.\d$/, `${what}: raw p50 / p99`)
    t.match(gwLatency, /^\d+\.\d \/ \d+\.\d$/, `${what}: gateway p50 / p99`)
    t.ok(number(ratio) > 0, `${what}: req/s ratio (${ratio ?? ''})`)
    t.match(perRequest, /^[1-9][\d,]* µs \/ [1-9][\d,]* µs$/, `${what}: CPU per request of each`)
  }

  // The reference servers, measured the same way: buffer and parse beside the uncached pairs, cache
  // beside the cached ones.
  const references = section(markdown, 'Reference servers')
  const throughput = rowsOf(references, /^(BL|SP2) /)
  t.same(throughput.map(([c, mode, server]) => `${c ?? ''}, ${mode ?? ''}: ${server ?? ''}`), [
    ...['BL list, 5 entries', 'SP2 list, 20 documents'].flatMap(c => [
      `${c}, uncached: gateway`, `${c}, uncached: reference \`buffer\``,
      `${c}, uncached: reference \`parse\``, `${c}, uncached: hand-written peer`,
      `${c}, cached: gateway`, `${c}, cached: reference \`cache\``
    ])
  ], 'one row per server, case and mode')
  for (const [c, mode, server, perRequest, cpuRatio, , , rps, rpsRatio] of throughput) {
    const what = `${c ?? '?'} ${mode ?? '?'} ${server ?? '?'}`
    t.ok(number(perRequest) > 0, `${what}: CPU per request (${perRequest ?? ''})`)
    t.ok(number(cpuRatio) > 0, `${what}: CPU ratio to raw (${cpuRatio ?? ''})`)
    t.ok(
      number(rps) > 0 && number(rpsRatio) > 0,
      `${what}: req/s and its ratio (${rps ?? ''}, ${rpsRatio ?? ''})`
    )
  }
  const latency = rowsOf(references, /^(gateway$|reference |hand-written peer$)/)
  t.equal(latency.length, 4, 'the latency table has the gateway, both servers and the peer')
  for (const [server, perRequest, , added] of latency) {
    t.ok(
      number(perRequest) > 0,
      `${server ?? '?'} at 10 connections: CPU per request (${perRequest ?? ''})`
    )
    t.match(added, /^\*\*[+-]\d+\.\d\*\*$/, `${server ?? '?'}: p99 added`)
  }

  // The container case: after the uncached BL pair (SP2-500 not run), its heap and load shed.
  const container = section(markdown, 'In the container')
  // The old space Node picks; the semi-space the ConfigMap's NODE_OPTIONS sets.
  const heap = /`--max-old-space-size=\d+`[^]*`NODE_OPTIONS=--max-semi-space-size=\d+`/
  t.match(container, heap, 'the heap it ran with')
  const containerRuns = rowsOf(container, /^\d+$/)
  t.same(containerRuns.map(([, c]) => c), ['BL list, 5 entries'], 'one run, of the BL list')
  for (const [, , rps, , perRequest, unconstrained, ratio, rss, , shed] of containerRuns) {
    t.ok(number(rps) > 0 && number(perRequest) > 0 && number(unconstrained) > 0, 'req/s, CPU')
    t.ok(number(ratio) > 0 && number(rss) > 0, `ratio ${ratio ?? ''}, peak RSS ${rss ?? ''}`)
    t.ok(Number.isInteger(number(shed)), `503 OVERLOADED counted (${shed ?? ''})`)
  }
})

test('npm run bench: rejects an unknown case with usage', async (t) => {
  const run = await runBench(['--cases', 'nope'], BENCH_GUARD_MS)
  t.equal(run.code, 2)
  t.match(run.stderr, /unknown "nope"/)
  t.match(run.stderr, /Usage: npm run bench/)
})
