// `npm run bench -- --stages`: what each stage of an uncached lookup costs,
// measured by taking it out. One gateway per variant (catalogue.ts): the
// full gateway, one per stage with that stage's modules replaced by a stub,
// and `bare` with every stub at once (what is left: Fastify, the route's
// handler, the reply). All are started together and measured in turn on the
// server CPU, the order rotated each round, the full gateway at the start
// and the end of every round; a stage's cost is the full gateway's CPU per
// request (mean of its two runs in that round) minus the variant's, and the
// report gives the median over rounds and the spread. Every variant has one
// unrecorded run first (a fresh process's code is not optimized yet).
import type { Child } from '../processes.ts'
import { median, type Measurement } from '../report.ts'
import { BARE, FULL, STAGES } from './catalogue.ts'

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
  const variants = [...STAGES.map(s => s.name), BARE]
  context.log(`starting ${variants.length + 1} gateway variants`)
  const full = await context.start(FULL)
  const children = new Map<string, Child>()
  for (const variant of variants) children.set(variant, await context.start(variant))
  const result: StageResult = {
    rows: variants.map((variant) => {
      const stage = STAGES.find(s => s.name === variant)
      return {
        variant,
        label: stage?.label ?? 'every stage above at once: Fastify, routing, the route handler, the reply are left',
        instead: stage?.instead ?? 'all the stubs',
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
    const before = await context.measure(full)
    const measured = new Map<string, Measurement>()
    for (const variant of order) {
      const m = await context.measure(children.get(variant)!)
      measured.set(variant, m)
      context.log(`round ${round} ${variant}: ${usOf(m).toFixed(0)} µs/req, ${Math.round(m.rps)} req/s`)
    }
    const after = await context.measure(full)
    const fullUs = (usOf(before) + usOf(after)) / 2
    context.log(`round ${round} full: ${usOf(before).toFixed(0)} and ${usOf(after).toFixed(0)} µs/req; raw proxy ${usOf(raw).toFixed(0)}`)
    result.full.push(fullUs)
    result.fullRps.push((before.rps + after.rps) / 2)
    result.raw.push(usOf(raw))
    result.rawRps.push(raw.rps)
    for (const row of result.rows) {
      const m = measured.get(row.variant)!
      row.own.push(usOf(m))
      row.savings.push(fullUs - usOf(m))
      row.rps.push(m.rps)
    }
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
    `Full gateway: **${us(fullUs)} µs** of CPU per request (rounds: ${result.full.map(us).join(', ')}); raw proxy: **${us(rawUs)} µs** (${result.raw.map(us).join(', ')}); ratio ${(fullUs / rawUs).toFixed(2)}.`,
    '',
    '| stage | taken out by | saves (median) | per round | variant µs/req (median) |',
    '| --- | --- | ---: | --- | ---: |'
  ]
  for (const row of result.rows) {
    lines.push(`| ${row.variant === BARE ? '**all of them (bare)**' : row.label} | ${row.instead} | **${us(median(row.savings))} µs** | ${row.savings.map(us).join(', ')} | ${us(median(row.own))} |`)
  }
  const stages = result.rows.filter(r => r.variant !== BARE)
  const sum = stages.reduce((total, r) => total + median(r.savings), 0)
  const bare = result.rows.find(r => r.variant === BARE)!
  lines.push('', `Sum of the single stages: ${us(sum)} µs; all taken out at once: ${us(median(bare.savings))} µs (the bare gateway at ${us(median(bare.own))} µs per request, the raw proxy at ${us(rawUs)}).`)
  return lines.join('\n')
}
