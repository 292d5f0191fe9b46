import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import madge from 'madge'
import { test } from 'tap'

// Arrows only point one way (ARCHITECTURE.md, "Layers"): every file of src/
// is in a layer, and imports files of its own layer and of those below,
// never of one above; no file imports, through any chain, a file that
// imports it back, and no folder of src/ imports a folder that imports it
// back. Type-only imports count too: a type that must be imported upward
// lives in the wrong room. The file check by hand: `npm run circles`.

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/**
 * The layers of src/, top first, as ARCHITECTURE.md's "Layers" lists them:
 * a folder (`routes/`) or a file (`upstream/client.ts`); a file is in the
 * layer of the longest entry it falls under.
 */
const LAYERS: ReadonlyArray<readonly string[]> = [
  [
    'main.ts', 'server.ts', 'app.ts', 'redis-functions.ts', 'profile-command.ts', 'probe/',
    'sandbox/'
  ],
  ['plugins/'],
  ['state/'],
  ['routes/'],
  ['upstream/client.ts', 'credentials/'],
  ['upstream/policies/'],
  ['upstream/transport.ts'],
  ['upstream/'],
  ['mapping/', 'telemetry/'],
  ['schemas/'],
  ['profile/'],
  ['auth/', 'idempotency/', 'logging/'],
  ['config/'],
  ['catalogue/'],
  ['state/types.ts', 'state/event-ids.ts'],
  ['domain/', 'errors.ts', 'clock.ts', 'typebox.ts', 'node-version.ts']
]

/** The layer of a file of src/ (0 the top), or undefined when no entry holds it. */
function layerOf (file: string): number | undefined {
  let found: number | undefined
  let longest = 0
  LAYERS.forEach((entries, layer) => {
    for (const entry of entries) {
      const holds = entry.endsWith('/') ? file.startsWith(entry) : file === entry
      if (holds && entry.length > longest) {
        found = layer
        longest = entry.length
      }
    }
  })
  return found
}

/** Each import that points up, from a graph of files and what each imports. */
function upward (files: Readonly<Record<string, readonly string[]>>): string[] {
  const found: string[] = []
  for (const [file, targets] of Object.entries(files)) {
    const from = layerOf(file)
    for (const target of targets) {
      const to = layerOf(target)
      if (from !== undefined && to !== undefined && to < from) found.push(`${file} -> ${target}`)
    }
  }
  return found.sort()
}

const graph = await madge(`${ROOT}src`, {
  fileExtensions: ['ts', 'mts'],
  tsConfig: `${ROOT}tsconfig.json`,
  detectiveOptions: { ts: { skipTypeImports: false }, tsx: { skipTypeImports: false } }
})
const imports = graph.obj()

/**
 * The folder of src/ a file lives in (`upstream/policies/cache.ts` -> `upstream`); undefined for
 * the files at the top.
 */
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
  t.ok(
    files.includes('app.ts') && files.includes('sandbox/server.ts') && files.length > 100,
    `every file of src/ is read (${files.length})`
  )
  t.ok(imports['app.ts']?.includes('plugins/auth.ts'), 'imports are resolved to files')
  t.same(
    graph.warnings().skipped,
    [],
    'every import is resolved: an unresolved one could hide a circle'
  )
  t.same(graph.circular().map(circle => circle.join(' -> ')), [], 'no circle')
})

test('no two folders of src/ import each other', async (t) => {
  t.same(folderCycles(imports), [], 'every arrow between two folders points one way')
})

test('the folder check finds a pair of folders importing each other', async (t) => {
  // The shape the restructure removed: credentials/ used upstream/'s failure mapping while
  // upstream/ imported credentials/.
  const files = {
    'credentials/login.ts': ['upstream/failures.ts'],
    'upstream/client.ts': ['credentials/index.ts', 'catalogue/operations.ts'],
    'catalogue/operations.ts': [],
    'app.ts': ['upstream/client.ts']
  }
  t.same(folderCycles(files), [
    'credentials <-> upstream (credentials/login.ts -> upstream/failures.ts; upstream/client.ts ' +
    '-> credentials/index.ts)'
  ])
  t.same(
    folderCycles({
      'routes/a.ts': ['catalogue/b.ts'],
      'catalogue/b.ts': [],
      'app.ts': ['routes/a.ts']
    }),
    [],
    'one-way arrows and the top files are no cycle'
  )
})

test('every file of src/ is in a layer, and no import points up', async (t) => {
  t.same(Object.keys(imports).filter(file => layerOf(file) === undefined), [], 'every file placed')
  t.same(upward(imports), [], 'every import points to its own layer or one below')
})

test('the layer check finds each import that pointed up before the layers', async (t) => {
  const before = {
    'config/schema.ts': ['schemas/typebox.ts'],
    'auth/clients.ts': ['schemas/typebox.ts', 'config/load.ts'],
    'catalogue/types.ts': ['auth/scopes.ts'],
    'upstream/policies/cache.ts': ['state/memory/lookup-cache.ts', 'state/types.ts'],
    'upstream/transport.ts': ['upstream/policies/deadline.ts', 'upstream/failures.ts'],
    'routes/events.ts': ['state/errors.ts', 'upstream/client.ts']
  }
  t.same(upward(before), [
    'auth/clients.ts -> schemas/typebox.ts',
    'catalogue/types.ts -> auth/scopes.ts',
    'config/schema.ts -> schemas/typebox.ts',
    'routes/events.ts -> state/errors.ts',
    'upstream/policies/cache.ts -> state/memory/lookup-cache.ts',
    'upstream/transport.ts -> upstream/policies/deadline.ts'
  ])
  t.equal(layerOf('upstream/policies/retry.ts'), layerOf('upstream/policies/cache.ts'), 'a folder')
  const [decode, transport] = [layerOf('upstream/decode.ts') ?? 0, layerOf('upstream/transport.ts')]
  t.ok(transport !== undefined && decode > transport, 'the longest entry holds')
})

test('ARCHITECTURE.md lists the same layers, in the same order', async (t) => {
  const text = readFileSync(`${ROOT}ARCHITECTURE.md`, 'utf8')
  const section = /^## Layers\n([\s\S]*?)(?=^## )/m.exec(text)?.[1] ?? ''
  // Each item's entries: the paths in backticks before its words.
  const listed = [...section.matchAll(/^\d+\. (.*)$/gm)]
    .map(([, item]) => (item ?? '').split(': ')[0] ?? '')
    .map(entries => [...entries.matchAll(/`([^`]+)`/g)].map(([, entry]) => entry))
  t.same(listed, LAYERS)
})

test('the sandbox imports nothing of the gateway: it is a second, independent reading of the ' +
  'hub', async (t) => {
  const outside = Object.entries(imports)
    .filter(([file]) => folderOf(file) === 'sandbox')
    .flatMap(([file, targets]) =>
      targets
        .filter((target) => folderOf(target) !== 'sandbox')
        .map((target) => `${file} -> ${target}`)
    )
  t.same(outside, [])
  t.ok(
    Object.keys(imports).filter((file) => folderOf(file) === 'sandbox').length > 10,
    "the sandbox's files are read"
  )
})

test('the catalogue is at the centre: it imports no layer that is built from it', async (t) => {
  const outside = Object.entries(imports)
    .filter(([file]) => folderOf(file) === 'catalogue')
    .flatMap(([file, targets]) => targets
      .filter(target => folderOf(target) !== 'catalogue')
      .map(target => `${file} -> ${target}`))
  t.same(outside, [], 'only its own files (the scope names its routes declare among them)')
})
