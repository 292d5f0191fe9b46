// `npm run faults`: the fault suite's full run (docs/operations.md#the-fault-suite),
// its report written to docs/reports/faults.md. Options: --seed <seed> to
// replay one, --profile ci for the short form (no report unless --report),
// --report <file> to write the report elsewhere. Exits 1 when a violation
// was found, printing each key's timeline and the faults around it.
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { markdown, summary } from './report.ts'
import { runFaults, type Profile } from './run.ts'

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    profile: { type: 'string', default: 'full' },
    report: { type: 'string' }
  }
})
const profile = values.profile as Profile
if (profile !== 'full' && profile !== 'ci') {
  console.error('--profile must be full or ci')
  process.exit(2)
}
const seed = values.seed ?? randomBytes(4).toString('hex')
const command = `npm run faults -- --seed ${seed}${profile === 'full' ? '' : ` --profile ${profile}`}`
console.log(`fault run: seed ${seed} (replay: ${command})`)

const started = Date.now()
const result = await runFaults({ profile, seed, log: (line) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${line}`) })
console.log(summary(result))
const report = values.report ?? (profile === 'full' ? 'docs/reports/faults.md' : undefined)
if (report !== undefined) {
  writeFileSync(report, markdown(result, command))
  console.log(`report written to ${report}`)
}
if (result.violations.length > 0) {
  for (const violation of result.violations) console.log(`VIOLATION ${violation.rule}${violation.key === undefined ? '' : ` (key ${violation.key})`}: ${violation.detail}`)
  for (const line of result.timelines) console.log(line)
  console.log(`replay: ${command}`)
  process.exit(1)
}
