// The resolve hook of register.ts: a module of the variant's list resolves to
// its stub; `<url>?original` (a stub importing what it wraps) to the module itself.
import type { InitializeHook, ResolveHook } from 'node:module'

const ORIGINAL = '?original'
let replacements: Record<string, string> = {}

export const initialize: InitializeHook<{ replacements: Record<string, string> }> = (data) => {
  replacements = data.replacements
}

export const resolve: ResolveHook = async (specifier, context, next) => {
  if (specifier.endsWith(ORIGINAL)) return await next(specifier.slice(0, -ORIGINAL.length), context)
  const resolved = await next(specifier, context)
  const stub = replacements[resolved.url]
  return stub === undefined ? resolved : { url: stub, shortCircuit: true }
}
