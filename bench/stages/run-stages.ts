// `npm run bench -- --stages`: what each stage of an uncached lookup costs,
// measured by taking it out. One gateway per variant (catalogue.ts): the
// full gateway, one per stage with that stage's modules replaced by a stub,
// and `bare` with every stub at once (what is left: Fastify, the route's
// handler, the reply). All are started together, pinned to the server CPU;
// each first gets load enough to fill its lookup cache (the steady state)
// and a warm-up run. Then, each round, all of them are measured at once,
// each offered the same requests a second (--rate, divided among them), and
// a stage's cost is the full gateway's CPU per request minus the variant's
// over the same seconds; the report gives the median over rounds and every
// round's figure. A control, a second full gateway, is measured like a
// stage: its "saving" is the method's own noise.
//
// Measuring the variants one after another was tried first, and dropped:
// on this kind of machine (a 2-vCPU VM) the same gateway's CPU per request
// drifted by ±30 % from one minute to the next, as did the raw proxy's, so
// a stage's 5-40 µs drowned; and a process's CPU per request depends on how
// many requests each wake-up of its event loop finds (closed-loop, a cheaper
// variant runs faster and pays less per request for that alone).
import type { Child } from '../processes.ts'
import { median, type Measurement } from '../report.ts'
import { BARE, CONTROL, FULL, STAGES } from './catalogue.ts'

export interface StageContext {
  /** Starts the gateway variant `name` (full, bare or a stage's) and resolves once it is ready and pinned. */
  start: (variant: string) => Promise<Child>
  /** One measured run of `child` at the options' connections, with a distinct lookup per request. */
  measure: (child: Child) => Promise<Measurement>
  /**
   * One measured run of every child at once, each offered the same number of
   * requests a second: the CPU per request of each, over the same seconds.
   */
  measureTogether: (children: Child[]) => Promise<Array<{ usPerRequest: number, rps: number }>>
  /** Unmeasured load as fast as the connections go, long enough to fill the gateway's lookup cache to its budget. */
  fill: (child: Child) => Promise<void>
  raw: Child
  measureRaw: () => Promise<Measurement>
  rounds: number
  log: (message: string) => void
}

export interface StageRow {
  variant: string
  label: string
  instead: string
  /** Per round: full − variant, µs per request. */
  savings: number[]
  /** Per round: the variant's own µs per request. */
  own: number[]
  rps: number[]
}

export interface StageResult {
  rows: StageRow[]
  full: number[]
  raw: number[]
  rawRps: number[]
  fullRps: number[]
}

function usOf (m: Measurement): number {
  return m.usPerRequest ?? Number.NaN
}

export async function runStages (context: StageContext): Promise<StageResult> {
  const variants = [CONTROL, ...STAGES.map(s => s.name), BARE]
  context.log(`starting ${variants.length + 1} gateway variants`)
  const full = await context.start(FULL)
  const children = new Map<string, Child>()
  for (const variant of variants) children.set(variant, await context.start(variant))
  const result: StageResult = {
    rows: variants.map((variant) => {
      const stage = STAGES.find(s => s.name === variant)
      return {
        variant,
        label: stage?.label ?? (variant === CONTROL ? 'control: a second full gateway, nothing taken out' : 'every stage above at once: Fastify, routing, the route handler, the reply are left'),
        instead: stage?.instead ?? (variant === CONTROL ? 'nothing (the method\'s own bias and noise)' : 'all the stubs'),
        savings: [],
        own: [],
        rps: []
      }
    }),
    full: [],
    raw: [],
    rawRps: [],
    fullRps: []
  }
  // Every variant once before the rounds, not recorded: each is a fresh process whose code is not optimized yet,
  // and whose lookup cache is empty (a cache filling up costs more garbage collection from round to round).
  context.log('filling every variant\'s cache, then a warm-up run of each')
  await context.measureRaw()
  for (const child of [full, ...children.values()]) {
    await context.fill(child)
    await context.measure(child)
  }
  for (let round = 1; round <= context.rounds; round++) {
    const raw = await context.measureRaw()
    result.raw.push(usOf(raw))
    result.rawRps.push(raw.rps)
    // Every gateway at once, each offered the same requests a second, over the same seconds: whatever
    // the machine does meanwhile (its other work, the hypervisor, the CPU's clock) each of them meets.
    const all = [FULL, ...variants]
    const measured = new Map<string, { usPerRequest: number, rps: number }>()
    const figures = await context.measureTogether(all.map(v => v === FULL ? full : children.get(v)!))
    all.forEach((variant, i) => {
      measured.set(variant, figures[i]!)
      context.log(`round ${round} ${variant}: ${figures[i]!.usPerRequest.toFixed(0)} µs/req, ${Math.round(figures[i]!.rps)} req/s`)
    })
    const fullUs = measured.get(FULL)!.usPerRequest
    result.full.push(fullUs)
    result.fullRps.push(measured.get(FULL)!.rps)
    for (const row of result.rows) {
      const m = measured.get(row.variant)!
      row.own.push(m.usPerRequest)
      row.savings.push(fullUs - m.usPerRequest)
      row.rps.push(m.rps)
    }
    context.log(`round ${round}: full gateway ${fullUs.toFixed(0)} µs/req, control ${measured.get(CONTROL)!.usPerRequest.toFixed(0)}, raw proxy ${usOf(raw).toFixed(0)} (alone)`)
  }
  return result
}

function us (value: number): string {
  return Number.isFinite(value) ? value.toFixed(0) : '–'
}

/** The stage table, as markdown. */
export function renderStages (result: StageResult, heading: string): string {
  const fullUs = median(result.full)
  const rawUs = median(result.raw)
  const lines = [
    heading,
    '',
    `Full gateway: **${us(fullUs)} µs** of CPU per request (rounds: ${result.full.map(us).join(', ')}); raw proxy: **${us(rawUs)} µs** (${result.raw.map(us).join(', ')}); ratio ${(fullUs / rawUs).toFixed(2)}. A stage's saving is the full gateway's CPU per request minus the variant's, in the same round.`,
    '',
    '| stage | taken out by | saves (median) | per round | variant µs/req (median) |',
    '| --- | --- | ---: | --- | ---: |'
  ]
  for (const row of result.rows) {
    lines.push(`| ${row.variant === BARE ? '**all of them (bare)**' : row.variant === CONTROL ? '*control (a second full gateway)*' : row.label} | ${row.instead} | **${us(median(row.savings))} µs** | ${row.savings.map(us).join(', ')} | ${us(median(row.own))} |`)
  }
  const stages = result.rows.filter(r => r.variant !== BARE && r.variant !== CONTROL)
  const sum = stages.reduce((total, r) => total + median(r.savings), 0)
  const bare = result.rows.find(r => r.variant === BARE)!
  lines.push('', `Sum of the single stages: ${us(sum)} µs; all taken out at once: ${us(median(bare.savings))} µs (the bare gateway at ${us(median(bare.own))} µs per request, the raw proxy at ${us(rawUs)}).`)
  return lines.join('\n')
}
