// Loaded with `node --import` by the gateway variants of `npm run bench --
// --stages`: replaces the dist/ modules of the variant named in
// BENCH_STAGE_VARIANT by their stubs (catalogue.ts), through a resolve hook.
// Bench code: the gateway itself has no such switch.
import { register } from 'node:module'
import { replacementsOf } from './catalogue.ts'

const variant = process.env.BENCH_STAGE_VARIANT ?? 'full'
const dist = new URL('../../dist/', import.meta.url)
const replacements: Record<string, string> = {}
for (const [module, stub] of Object.entries(replacementsOf(variant))) {
  replacements[new URL(module, dist).href] = new URL(`./stubs/${stub}`, import.meta.url).href
}
register('./hooks.ts', import.meta.url, { data: { replacements } })
