import { execFile, spawnSync } from 'node:child_process'
import { cp, mkdtemp, readFile, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import t from 'tap'
import ts from 'typescript'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { CLIENT_PACKAGE_DIR } from './build-client.ts'
import { listeningGateway } from './gateway.ts'

/**
 * The package as others get it: built by the root command into
 * clients/typescript/dist, imported by its name through the workspace link,
 * from Node (this test runs on Node 22 in CI too) and from TypeScript with
 * Node's and bundlers' module resolution.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url))

const build = spawnSync('npm', ['run', 'build:client'], { cwd: ROOT, encoding: 'utf8' })
t.equal(
  build.status,
  0,
  build.status === 0 ? 'npm run build:client' : `npm run build:client: ${build.stderr}`
)

t.test('package.json points at what the build wrote', async (t) => {
  const manifest = JSON.parse(
    await readFile(new URL('package.json', `file://${CLIENT_PACKAGE_DIR}`), 'utf8')
  ) as { name: string; type: string; exports: Record<string, Record<string, string>> }
  t.equal(manifest.name, '@customs-gateway/client')
  t.equal(manifest.type, 'module')
  for (const target of Object.values(manifest.exports['.'] ?? {})) {
    await t.resolves(readFile(new URL(target, `file://${CLIENT_PACKAGE_DIR}`)), `${target} exists`)
  }
})

t.test('packing builds it first: a tree never built packs with dist/', async (t) => {
  // A copy of the package without dist/ (this one's is written above, and maybe by other
  // tests), resolving its tools and dependencies in the workspace's node_modules.
  const copy = await mkdtemp(join(tmpdir(), 'gateway-client-pack-'))
  t.teardown(() => rm(copy, { recursive: true, force: true }))
  await cp(CLIENT_PACKAGE_DIR, copy, {
    recursive: true,
    filter: source => !/^(dist|node_modules)(\/|$)/.test(relative(CLIENT_PACKAGE_DIR, source))
  })
  await symlink(join(ROOT, 'node_modules'), join(copy, 'node_modules'))
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json'],
    { cwd: copy })
  const [packed] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>
  const files = (packed?.files ?? []).map(file => file.path)
  t.ok(['dist/index.js', 'dist/index.d.ts'].every(file => files.includes(file)), files.join(', '))
})

t.test('Node imports it by name and calls the gateway with it', async (t) => {
  const gateway = await listeningGateway(t)
  const script = `
    const client = await import('@customs-gateway/client')
    const api = client.createGatewayClient({
      baseUrl: process.env.BASE_URL, apiKey: process.env.KEY
    })
    const { data } = await api.GET('/v1/customs/bc16/bills-of-lading', {
      params: { query: { npwp: process.env.NPWP } }
    })
    console.log(JSON.stringify({
      exports: Object.keys(client).sort(), blNos: data.data.map(bl => bl.blNo)
    }))`
  // Not spawnSync: the gateway it calls runs in this process.
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', script],
    {
      cwd: ROOT,
      env: { ...process.env, BASE_URL: gateway.baseUrl, KEY: gateway.key, NPWP: F.taxpayer.npwp }
    }
  )
  const out = JSON.parse(stdout) as { exports: string[], blNos: string[] }
  t.same(out.exports, [
    'EventSocketError',
    'createGatewayClient',
    'newIdempotencyKey',
    'subscribeEvents'
  ])
  t.same(out.blNos, F.taxpayer.bc16.map(bl => bl.blNo))
})

const CONSUMER = `
import {
  createGatewayClient, subscribeEvents, type BookedEvent, type ErrorEnvelope
} from '@customs-gateway/client'
const client = createGatewayClient({ baseUrl: 'http://localhost:3000', apiKey: 'cgw_key' })
const { data, error } = await client.GET('/v1/customs/bc20/bills-of-lading', {
  params: { query: { npwp: '012345678901000' } }
})
export const found: number | undefined = data?.meta.count
export const problem: ErrorEnvelope | undefined = error
subscribeEvents({
  baseUrl: 'http://localhost:3000',
  apiKey: 'cgw_key',
  onEvent: (event: BookedEvent) => event.data.bookingRequestId
})
await client.GET('/v1/customs/bc20/bills-of-lading', {
  // @ts-expect-error the declarations keep the route types: blNo is no query of this route
  params: { query: { npwp: '012345678901000', blNo: 'X' } }
})
`

for (const [name, options] of [
  [
    'Node (module nodenext)',
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2023.d.ts'],
      types: ['node']
    }
  ],
  [
    'a browser bundle (module esnext, resolution bundler)',
    {
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: []
    }
  ]
] as const) {
  t.test(`its declarations type-check a consumer in ${name}, libraries included`, async (t) => {
    // A consumer module at the repository root, as an app of this workspace would be, held in
    // memory.
    const file = `${ROOT}consumer-check.mts`
    const compilerOptions: ts.CompilerOptions = {
      ...options,
      lib: [...options.lib],
      types: [...options.types],
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      skipLibCheck: false
    }
    const host = ts.createCompilerHost(compilerOptions)
    const getSourceFile = host.getSourceFile.bind(host)
    host.getSourceFile = (fileName, version, ...rest) =>
      fileName === file
        ? ts.createSourceFile(fileName, CONSUMER, version)
        : getSourceFile(fileName, version, ...rest)
    const fileExists = host.fileExists.bind(host)
    host.fileExists = (fileName) => fileName === file || fileExists(fileName)
    const program = ts.createProgram({ rootNames: [file], options: compilerOptions, host })
    const ours = program
      .getSourceFiles()
      .map((f) => f.fileName)
      .filter((f) => f.startsWith(`${CLIENT_PACKAGE_DIR}`))
    t.ok(
      ours.length > 0 &&
        ours.every((f) => f.startsWith(`${CLIENT_PACKAGE_DIR}dist/`) && f.endsWith('.d.ts')),
      `the package's declarations: ${ours.join(', ')}`
    )
    t.same(
      ts
        .getPreEmitDiagnostics(program)
        .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n')),
      []
    )
  })
}
