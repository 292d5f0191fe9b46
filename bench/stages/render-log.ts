// `npx tsx bench/stages/render-log.ts <bench log> <report.md>`: renders the
// stage table of a `--stages` run again from the figures its log printed
// (`round N variant: X µs/req, Y req/s`), with this checkout's renderStages,
// and replaces the table in the report it wrote. For a run made before a
// change to how the table is computed from the same measurements.
import { readFileSync, writeFileSync } from 'node:fs'
import { BARE, CONTROL, FULL, STAGES } from './catalogue.ts'
import { renderStages, type StageResult } from './run-stages.ts'

const [logFile, reportFile] = process.argv.slice(2)
if (logFile === undefined || reportFile === undefined) {
  console.error('usage: render-log.ts <bench log> <report.md>')
  process.exit(2)
}
const log = readFileSync(logFile, 'utf8')
const perRound = new Map<number, Map<string, { us: number, rps: number }>>()
for (const [, round, variant, us, rps] of log.matchAll(/round (\d+) ([a-z-]+): (\d+) µs\/req, (\d+) req\/s/g)) {
  const figures = perRound.get(Number(round)) ?? new Map<string, { us: number, rps: number }>()
  figures.set(variant!, { us: Number(us), rps: Number(rps) })
  perRound.set(Number(round), figures)
}
const raws = [...log.matchAll(/round (\d+): full gateway \d+ µs\/req, control \d+, raw proxy (\d+)/g)].map(m => Number(m[2]))
const variants = [CONTROL, ...STAGES.map(s => s.name), BARE]
const result: StageResult = {
  rows: variants.map(variant => {
    const stage = STAGES.find(s => s.name === variant)
    return {
      variant,
      label: stage?.label ?? variant,
      instead: stage?.instead ?? (variant === CONTROL ? 'nothing (the method\'s own bias and noise)' : 'all the stubs'),
      savings: [],
      own: [],
      rps: []
    }
  }),
  full: [],
  raw: raws,
  rawRps: [],
  fullRps: []
}
for (const figures of perRound.values()) {
  const fullUs = (figures.get(FULL)!.us + figures.get(CONTROL)!.us) / 2
  result.full.push(fullUs)
  result.fullRps.push(figures.get(FULL)!.rps)
  for (const row of result.rows) {
    const m = figures.get(row.variant)!
    row.own.push(m.us)
    row.savings.push(fullUs - m.us)
    row.rps.push(m.rps)
  }
}
const heading = '## CPU per request, by stage taken out'
const report = readFileSync(reportFile, 'utf8')
const at = report.indexOf(heading)
if (at < 0) throw new Error(`${reportFile} has no "${heading}"`)
writeFileSync(reportFile, `${report.slice(0, at)}${renderStages(result, heading)}\n`)
