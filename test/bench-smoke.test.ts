import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { test } from 'tap'

// The benchmark is not part of `npm test`; this only checks that the bench
// script starts its processes and writes a table of numbers on a tiny run.

const ROOT = fileURLToPath(new URL('..', import.meta.url))

interface Run { code: number | null, stdout: string, stderr: string }

async function runBench (args: string[], timeoutMs: number): Promise<Run> {
  // No test-runner loaders or coverage hooks in the bench and its children.
  const env = { ...process.env }
  delete env.NODE_OPTIONS
  delete env.NODE_V8_COVERAGE
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/run.ts'), ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] })
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

/** The cells of the markdown table rows whose first cell is a round number. */
function runRows (markdown: string): string[][] {
  const section = markdown.split('## Every run')[1] ?? ''
  return section.split('\n')
    .filter(line => /^\| \d+ \|/.test(line))
    .map(line => line.split('|').slice(1, -1).map(cell => cell.trim()))
}

const number = (cell: string | undefined): number => Number((cell ?? '').replaceAll(',', '').split(' ')[0])

test('npm run bench: a one-second round produces a table of numbers', { timeout: 150_000 }, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'bench-smoke-'))
  t.teardown(() => rm(dir, { recursive: true, force: true }))
  const out = join(dir, 'benchmarks.md')

  const run = await runBench(['--quick', '--source', '--cases', 'bl,sp2-20', '--no-profile', '--references', '--out', out], 120_000)
  t.equal(run.code, 0, `bench exits 0\n${run.stderr.slice(-3000)}`)

  const markdown = await readFile(out, 'utf8')
  t.match(markdown, /^# Benchmarks/, 'title')
  t.match(markdown, /\*\*Node:\*\* v\d+\.\d+\.\d+/, 'Node version')
  t.match(markdown, /\*\*Machine:\*\* .+ × \d+/, 'machine')
  t.match(markdown, /\*\*Command:\*\* `.*bench\/run\.ts --quick/, 'command')
  t.match(markdown, /## Targets/, 'targets section')
  t.match(markdown, /\*\*Response cache:\*\* /, 'says whether the cache was measured')
  t.ok(run.stdout.includes('## Targets'), 'the table is printed too')

  const rows = runRows(markdown)
  // bl and sp2-20, uncached and cached, plus the 10-connection latency pair.
  t.equal(rows.length, 5, 'one row per pair')
  for (const row of rows) {
    const [round, label, , conns, , rawRps, rawLatency, gwRps, gwLatency, ratio] = row
    const what = `${label ?? '?'} ${row[2] ?? '?'}`
    t.equal(round, '1', `${what}: round`)
    t.ok(number(conns) > 0, `${what}: connections`)
    t.ok(number(rawRps) > 0, `${what}: raw req/s is a positive number (${rawRps})`)
    t.ok(number(gwRps) > 0, `${what}: gateway req/s is a positive number (${gwRps})`)
    t.match(rawLatency, /^\d+\.\d \/ \d+\.\d$/, `${what}: raw p50 / p99`)
    t.match(gwLatency, /^\d+\.\d \/ \d+\.\d$/, `${what}: gateway p50 / p99`)
    t.ok(Number.isFinite(number(ratio)) && number(ratio) > 0, `${what}: ratio (${ratio})`)
  }

  // --references: the gateway and both minimal servers, for each uncached case and at 10 connections.
  const references = (markdown.split('## Reference servers')[1] ?? '').split('## Every run')[0] ?? ''
  const throughput = references.split('\n').filter(line => /^\| (BL|SP2) /.test(line)).map(line => line.split('|').slice(1, -1).map(cell => cell.trim()))
  t.same(throughput.map(row => `${row[0] ?? ''}: ${row[1] ?? ''}`), [
    'BL list, 5 entries: gateway', 'BL list, 5 entries: reference `buffer`', 'BL list, 5 entries: reference `parse`',
    'SP2 list, 20 documents: gateway', 'SP2 list, 20 documents: reference `buffer`', 'SP2 list, 20 documents: reference `parse`'
  ], 'one row per server and case')
  for (const [label, server, rps, ratio] of throughput) {
    t.ok(number(rps) > 0, `${label} ${server}: req/s (${rps})`)
    t.ok(number((ratio ?? '').replaceAll('*', '')) > 0, `${label} ${server}: ratio to raw (${ratio})`)
  }
  const latency = references.split('\n').filter(line => /^\| (gateway|reference) /.test(line))
  t.equal(latency.length, 3, 'the latency table has the gateway and both servers')
  for (const line of latency) t.match(line, /\*\*[+-]\d+\.\d\*\*/, `p99 added: ${line}`)
})

test('npm run bench: rejects an unknown case with usage', async (t) => {
  const run = await runBench(['--cases', 'nope'], 30_000)
  t.equal(run.code, 2)
  t.match(run.stderr, /unknown "nope"/)
  t.match(run.stderr, /Usage: npm run bench/)
})
