// `npm run bench -- --stages`: what each stage of an uncached lookup costs,
// measured by taking it out. One gateway per variant (catalogue.ts): the
// full gateway, one per stage with that stage's modules replaced by a stub,
// and `bare` with every stub at once (what is left: Fastify, the route's
// handler, the reply). All are started together and pinned to the server
// CPU; each first gets --fill seconds of load that fill its lookup cache (the
// steady state: a cache filling up costs more collection from round to
// round) and a warm-up run. Then each is measured once a round, the order
// rotated, as fast as 256 connections and 256 hub connections carry it, so
// that its CPU is saturated: a variant's CPU per request does not then
// depend on how much of the time it sits idle. A stage's cost is the full
// gateway's CPU per request minus the variant's in the same round, the
// median over rounds; every round's figure is in the report. A control, a
// second full gateway, is measured like a stage: its "saving" is the
// method's own noise (docs/performance.md#stage-costs).
import type { Child } from '../processes.ts'
import { median, type Measurement } from '../report.ts'
import { BARE, CONTROL, FULL, STAGES } from './catalogue.ts'

export interface StageContext {
  /** Starts the gateway variant `name` (full, bare or a stage's) and resolves once it is ready and pinned. */
  start: (variant: string) => Promise<Child>
  /** One measured run of `child` at the options' connections, with a distinct lookup per request. */
  measure: (child: Child) => Promise<Measurement>
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

/** Every variant measured besides the full gateway, in the report's order. */
export const VARIANTS: readonly string[] = [CONTROL, ...STAGES.map(s => s.name), BARE]

/** What one round measured of one gateway. */
export interface RoundFigure { usPerRequest: number, rps: number }

export function emptyStageResult (): StageResult {
  return {
    rows: VARIANTS.map((variant) => {
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
}

/**
 * Adds one round: `figures` has the full gateway and every variant. The
 * round's full-gateway figure is the mean of the two identical ones (full
 * and control), which differ by the method's noise; the control's row then
 * says how far each is from that mean. Returns that figure.
 */
export function addRound (result: StageResult, figures: ReadonlyMap<string, RoundFigure>, raw: RoundFigure): number {
  const fullUs = (figures.get(FULL)!.usPerRequest + figures.get(CONTROL)!.usPerRequest) / 2
  result.raw.push(raw.usPerRequest)
  result.rawRps.push(raw.rps)
  result.full.push(fullUs)
  result.fullRps.push(figures.get(FULL)!.rps)
  for (const row of result.rows) {
    const m = figures.get(row.variant)!
    row.own.push(m.usPerRequest)
    row.savings.push(fullUs - m.usPerRequest)
    row.rps.push(m.rps)
  }
  return fullUs
}

export async function runStages (context: StageContext): Promise<StageResult> {
  context.log(`starting ${VARIANTS.length + 1} gateway variants`)
  const full = await context.start(FULL)
  const children = new Map<string, Child>()
  for (const variant of VARIANTS) children.set(variant, await context.start(variant))
  const result = emptyStageResult()
  // Every variant once before the rounds, not recorded: each is a fresh process whose code is not optimized yet,
  // and whose lookup cache is empty (a cache filling up costs more garbage collection from round to round).
  context.log('filling every variant\'s cache, then a warm-up run of each')
  await context.measureRaw()
  for (const child of [full, ...children.values()]) {
    await context.fill(child)
    await context.measure(child)
  }
  for (let round = 1; round <= context.rounds; round++) {
    // Every gateway once a round, the full one and the control among them, the order rotated: each sits idle as long as the others between its runs.
    const all = [FULL, ...VARIANTS]
    const shift = (round - 1) % all.length
    const order = [...all.slice(shift), ...all.slice(0, shift)]
    const raw = await context.measureRaw()
    const figures = new Map<string, RoundFigure>()
    for (const variant of order) {
      const m = await context.measure(variant === FULL ? full : children.get(variant)!)
      figures.set(variant, { usPerRequest: usOf(m), rps: m.rps })
      context.log(`round ${round} ${variant}: ${usOf(m).toFixed(0)} µs/req, ${Math.round(m.rps)} req/s`)
    }
    const fullUs = addRound(result, figures, { usPerRequest: usOf(raw), rps: raw.rps })
    context.log(`round ${round}: full gateway ${fullUs.toFixed(0)} µs/req, control ${figures.get(CONTROL)!.usPerRequest.toFixed(0)}, raw proxy ${usOf(raw).toFixed(0)}`)
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
    `Full gateway: **${us(fullUs)} µs** of CPU per request (rounds: ${result.full.map(us).join(', ')}); raw proxy: **${us(rawUs)} µs** (${result.raw.map(us).join(', ')}); ratio ${(fullUs / rawUs).toFixed(2)}. The full gateway's figure of a round is the mean of two identical full gateways measured in it (full and control); a stage's saving is that figure minus the variant's CPU per request, in the same round, and the control's row is how far each of the two identical gateways is from their mean: the method's noise, which every row carries.`,
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
