import { randomBytes } from 'node:crypto'
import tap, { test } from 'tap'
import { FAULT_KINDS } from '../faults/nemesis.ts'
import { summary } from '../faults/report.ts'
import { PROFILES, runFaults } from '../faults/run.ts'

// The CI form of `npm run faults` (test/faults/): the same processes, workload
// and invariants, fewer faults. A new seed each run, printed; replay one with
// `npm run faults -- --seed <seed> --profile ci`, or FAULTS_SEED=<seed> here.
tap.setTimeout(300_000)

test('under replica kills, Redis restarts, freezes, a full Redis, a Sentinel failover and a slow ' +
  'hub, no key reaches the hub twice and every answer is a documented one', async (t) => {
  const seed = process.env.FAULTS_SEED ?? randomBytes(4).toString('hex')
  t.comment(`seed ${seed} (replay: npm run faults -- --seed ${seed} --profile ci)`)
  const result = await runFaults({ profile: 'ci', seed, log: (line) => t.comment(line) })
  t.comment(summary(result))

  t.same(result.violations, [], `no violation (seed ${seed})`)
  for (const line of result.timelines) t.comment(line)
  const plan = PROFILES.ci.faults
  for (const kind of FAULT_KINDS) {
    t.equal(
      result.faults.filter((fault) => fault.kind === kind).length,
      plan[kind] ?? 0,
      `${kind}: every planned fault ran`
    )
  }
  t.ok(result.writes.length >= PROFILES.ci.minWrites, `${result.writes.length} writes`)
  t.ok(
    result.writes.every((write) => write.attempts.some((attempt) => attempt.final === true)),
    'every key was asked once more after the faults'
  )
  t.ok(
    result.probes.length > 0 && result.probes.every((probe) => probe.allowed <= probe.bound),
    'the rate-limit probes stayed within the bound'
  )
  t.ok(
    result.readers.length === 4 && result.readers.every((reader) => reader.received > 0),
    'every event reader received events'
  )
  const failovers = result.faults.filter((fault) => fault.kind === 'failover')
  t.ok(
    failovers.every((fault) => fault.writeGap !== undefined),
    'each write gap measured'
  )
})
