// `npm run bench -- --stages`: what each stage of an uncached lookup costs,
// measured by taking it out. One gateway per variant (catalogue.ts): the
// full gateway, one per stage with that stage's modules replaced by a stub,
// and `bare` with every stub at once (what is left: Fastify, the route's
// handler, the reply). All are started together and measured in turn on the
// server CPU, the order rotated each round; each variant is measured right
// beside a run of the full gateway (A, B or B, A, alternating), and a stage's
// cost is the full gateway's CPU per request minus the variant's in that
// pair. The report gives the median over rounds and every round's figure.
// Every variant has one unrecorded run first (a fresh process's code is not
// optimized yet).
import type { Child } from '../processes.ts'
import { median, type Measurement } from '../report.ts'
import { BARE, CONTROL, FULL, STAGES } from './catalogue.ts'

export interface StageContext {
  /** Starts the gateway variant `name` (full, bare or a stage's) and resolves once it is ready and pinned. */
  start: (variant: string) => Promise<Child>
  /** One measured run of `child` at the options' connections, with a distinct lookup per request. */
  measure: (child: Child) => Promise<Measurement>
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
  // Every variant once before the rounds, not recorded: each is a fresh process whose code is not optimized yet.
  context.log('warm-up run of every variant')
  await context.measureRaw()
  await context.measure(full)
  for (const variant of variants) await context.measure(children.get(variant)!)
  for (let round = 1; round <= context.rounds; round++) {
    // Rotated so that no stage is always measured at the same point of a round.
    const shift = (round - 1) % variants.length
    const order = [...variants.slice(shift), ...variants.slice(0, shift)]
    const raw = await context.measureRaw()
    result.raw.push(usOf(raw))
    result.rawRps.push(raw.rps)
    const fulls: number[] = []
    const fullRps: number[] = []
    // Each variant right beside a run of the full gateway (which goes first alternates), so that the machine's drift cancels in the difference.
    for (const [i, variant] of order.entries()) {
      const fullFirst = (round + i) % 2 === 1
      const a = fullFirst ? await context.measure(full) : undefined
      const m = await context.measure(children.get(variant)!)
      const b = a ?? await context.measure(full)
      fulls.push(usOf(b))
      fullRps.push(b.rps)
      const row = result.rows.find(r => r.variant === variant)!
      row.own.push(usOf(m))
      row.savings.push(usOf(b) - usOf(m))
      row.rps.push(m.rps)
      context.log(`round ${round} ${variant}: ${usOf(m).toFixed(0)} µs/req beside the full gateway's ${usOf(b).toFixed(0)} (${Math.round(m.rps)} and ${Math.round(b.rps)} req/s)`)
    }
    result.full.push(median(fulls))
    result.fullRps.push(median(fullRps))
    context.log(`round ${round}: full gateway ${median(fulls).toFixed(0)} µs/req (median of its ${fulls.length} runs), raw proxy ${usOf(raw).toFixed(0)}`)
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
    `Full gateway: **${us(fullUs)} µs** of CPU per request (median of each round's runs: ${result.full.map(us).join(', ')}); raw proxy: **${us(rawUs)} µs** (${result.raw.map(us).join(', ')}); ratio ${(fullUs / rawUs).toFixed(2)}. A stage's saving is the full gateway's CPU per request minus the variant's, measured side by side.`,
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
