import { fileURLToPath } from 'node:url'
import madge from 'madge'
import { test } from 'tap'

// Arrows only point one way (ARCHITECTURE.md, "Layers"): no file of src/
// imports, through any chain, a file that imports it back, and no folder of
// src/ imports a folder that imports it back. Type-only imports count too: a
// type that must be imported upward lives in the wrong room. The file check
// by hand: `npm run circles`.

const ROOT = fileURLToPath(new URL('..', import.meta.url))

const graph = await madge(`${ROOT}src`, {
  fileExtensions: ['ts', 'mts'],
  tsConfig: `${ROOT}tsconfig.json`,
  detectiveOptions: { ts: { skipTypeImports: false }, tsx: { skipTypeImports: false } }
})
const imports = graph.obj()

/** The folder of src/ a file lives in (`upstream/policies/cache.ts` -> `upstream`); undefined for the files at the top. */
function folderOf (file: string): string | undefined {
  const at = file.indexOf('/')
  return at === -1 ? undefined : file.slice(0, at)
}

/**
 * Each pair of folders that import each other, with one import each way,
 * from a graph of files and what each imports.
 */
function folderCycles (files: Readonly<Record<string, readonly string[]>>): string[] {
  const edges = new Map<string, string>()
  for (const [file, targets] of Object.entries(files)) {
    for (const target of targets) {
      const from = folderOf(file)
      const to = folderOf(target)
      if (from === undefined || to === undefined || from === to) continue
      if (!edges.has(`${from} -> ${to}`)) edges.set(`${from} -> ${to}`, `${file} -> ${target}`)
    }
  }
  const cycles: string[] = []
  for (const [edge, example] of edges) {
    const [from, to] = edge.split(' -> ') as [string, string]
    const back = edges.get(`${to} -> ${from}`)
    if (back !== undefined && from < to) cycles.push(`${from} <-> ${to} (${example}; ${back})`)
  }
  return cycles.sort()
}

test('src/ has no import circle', async (t) => {
  const files = Object.keys(imports)
  t.ok(files.includes('app.ts') && files.includes('sandbox/server.ts') && files.length > 100, `every file of src/ is read (${files.length})`)
  t.ok(imports['app.ts']?.includes('plugins/auth.ts'), 'imports are resolved to files')
  t.same(graph.warnings().skipped, [], 'every import is resolved: an unresolved one could hide a circle')
  t.same(graph.circular().map(circle => circle.join(' -> ')), [], 'no circle')
})

test('no two folders of src/ import each other', async (t) => {
  t.same(folderCycles(imports), [], 'every arrow between two folders points one way')
})

test('the folder check finds a pair of folders importing each other', async (t) => {
  // The shape the restructure removed: credentials/ used upstream/'s failure mapping while upstream/ imported credentials/.
  const files = {
    'credentials/login.ts': ['upstream/failures.ts'],
    'upstream/client.ts': ['credentials/index.ts', 'catalogue/operations.ts'],
    'catalogue/operations.ts': [],
    'app.ts': ['upstream/client.ts']
  }
  t.same(folderCycles(files), ['credentials <-> upstream (credentials/login.ts -> upstream/failures.ts; upstream/client.ts -> credentials/index.ts)'])
  t.same(folderCycles({ 'routes/a.ts': ['catalogue/b.ts'], 'catalogue/b.ts': [], 'app.ts': ['routes/a.ts'] }), [], 'one-way arrows and the top files are no cycle')
})

test('the sandbox imports nothing of the gateway: it is a second, independent reading of the hub', async (t) => {
  const outside = Object.entries(imports)
    .filter(([file]) => folderOf(file) === 'sandbox')
    .flatMap(([file, targets]) => targets.filter(target => folderOf(target) !== 'sandbox').map(target => `${file} -> ${target}`))
  t.same(outside, [])
  t.ok(Object.keys(imports).filter(file => folderOf(file) === 'sandbox').length > 10, 'the sandbox\'s files are read')
})

test('the catalogue is at the centre: it imports no layer that is built from it', async (t) => {
  const upward = Object.entries(imports)
    .filter(([file]) => folderOf(file) === 'catalogue')
    .flatMap(([file, targets]) => targets.filter(target => !['catalogue', 'auth'].includes(folderOf(target) ?? '')).map(target => `${file} -> ${target}`))
  t.same(upward, [], 'only its own files and the scope names of auth/')
})
