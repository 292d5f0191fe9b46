import { fileURLToPath } from 'node:url'
import madge from 'madge'
import { test } from 'tap'

// Arrows only point one way (style.md, "A layout to grow into"): no file of
// src/ imports, through any chain, a file that imports it back. Type-only
// imports count too: a type that must be imported upward lives in the wrong
// room. The same check by hand: `npm run circles`.

const ROOT = fileURLToPath(new URL('..', import.meta.url))

test('src/ has no import circle', async (t) => {
  const graph = await madge(`${ROOT}src`, {
    fileExtensions: ['ts', 'mts'],
    tsConfig: `${ROOT}tsconfig.json`,
    detectiveOptions: { ts: { skipTypeImports: false }, tsx: { skipTypeImports: false } }
  })
  const files = Object.keys(graph.obj())
  t.ok(files.includes('app.ts') && files.includes('sandbox/server.ts') && files.length > 100, `every file of src/ is read (${files.length})`)
  t.ok(graph.obj()['app.ts']?.includes('plugins/auth.ts'), 'imports are resolved to files')
  t.same(graph.warnings().skipped, [], 'every import is resolved: an unresolved one could hide a circle')
  t.same(graph.circular().map(circle => circle.join(' -> ')), [], 'no circle')
})
