import { test } from 'tap'
import { parseOptions } from '../bench/options.ts'
import { evaluateTargets, type Measurement, type Pair, type ReportInput } from '../bench/report.ts'

/** The bench's verdicts (bench/report.ts) on made-up pairs: no load is generated here. */

function measurement (rps: number): Measurement {
  return { rps, p50: 20, p99: 30, statuses: { 200: 1 }, non2xx: 0, errors: 0, timeouts: 0, peakRssMb: 100, targetCores: 0.5, otherCores: 0 } as unknown as Measurement
}

function input (ratios: number[]): ReportInput {
  const pairs: Pair[] = ratios.map((ratio, i) => ({
    round: i + 1,
    caseName: 'sp2-500',
    kind: 'uncached',
    connections: 100,
    order: 'raw first',
    raw: measurement(1000),
    gateway: measurement(1000 * ratio),
    ratio,
    p99Added: 0
  }))
  return { options: parseOptions(['--cases', 'sp2-500', '--modes', 'uncached']), cases: [{ name: 'sp2-500', label: 'SP2 list, 500 documents' }], cache: undefined, pairs } as unknown as ReportInput
}

test('a ratio that rounds to its goal is shown with the digit that decides it', async (t) => {
  const verdict = (ratios: number[]) => evaluateTargets(input(ratios)).find(r => r.name.startsWith('SP2 list, 500 documents, uncached'))!
  const under = verdict([0.2996, 0.2997, 0.36])
  t.equal(under.result, 'FAIL', 'just under the goal fails')
  t.match(under.measured, /^0\.300 /, 'and says 0.300 (three decimals), not 0.30')
  const over = verdict([0.3004, 0.3001, 0.2])
  t.equal(over.result, 'pass', 'just over passes')
  t.match(over.measured, /^0\.300 /)
  const clear = verdict([0.25, 0.26, 0.27])
  t.equal(clear.result, 'FAIL')
  t.match(clear.measured, /^0\.26 /, 'two decimals when they are enough')
})
