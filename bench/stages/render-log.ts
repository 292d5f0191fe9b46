// `npx tsx bench/stages/render-log.ts <bench log> <report.md>`: renders the
// stage table of a `--stages` run again from the figures its log printed
// (`round N variant: X µs/req, Y req/s`), with this checkout's renderStages,
// and replaces the table in the report it wrote. For a run made before a
// change to how the table is computed from the same measurements.
import { readFileSync, writeFileSync } from 'node:fs'
import { addRound, emptyStageResult, renderStages, type RoundFigure } from './run-stages.ts'

const [logFile, reportFile] = process.argv.slice(2)
if (logFile === undefined || reportFile === undefined) {
  console.error('usage: render-log.ts <bench log> <report.md>')
  process.exit(2)
}
const log = readFileSync(logFile, 'utf8')
const rounds = new Map<number, Map<string, RoundFigure>>()
for (const [, round, variant, us, rps] of log.matchAll(
  /round (\d+) ([a-z-]+): (\d+) µs\/req, (\d+) req\/s/g
)) {
  const figures = rounds.get(Number(round)) ?? new Map<string, RoundFigure>()
  figures.set(variant!, { usPerRequest: Number(us), rps: Number(rps) })
  rounds.set(Number(round), figures)
}
const raws = new Map(
  [...log.matchAll(/round (\d+): full gateway \d+ µs\/req, control \d+, raw proxy (\d+)/g)].map(
    (m) => [Number(m[1]), Number(m[2])]
  )
)
const result = emptyStageResult()
for (const [round, figures] of rounds) {
  // The log gives the raw proxy's CPU per request, not its rate.
  addRound(result, figures, { usPerRequest: raws.get(round) ?? Number.NaN, rps: Number.NaN })
}
const heading = '## CPU per request, by stage taken out'
const report = readFileSync(reportFile, 'utf8')
const at = report.indexOf(heading)
if (at < 0) throw new Error(`${reportFile} has no "${heading}"`)
writeFileSync(reportFile, `${report.slice(0, at)}${renderStages(result, heading)}\n`)
