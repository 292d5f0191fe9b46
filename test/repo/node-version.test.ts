import { spawn, spawnSync } from 'node:child_process'
import { once } from 'node:events'
import { readFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { test } from 'tap'
import { nodeVersionProblem, requiredNode } from '../../src/node-version.ts'

/**
 * The entry checks the Node.js version before anything of the gateway is
 * loaded. Shown with a real older Node.js: OLD_NODE (.ci/run sets it: the
 * machine's own node when it is older than package.json's engines, else
 * Node 20 from the npm registry), or /usr/bin/node. Without one older than
 * the engines range this test fails rather than pretend.
 */
const OLD_NODE = process.env.OLD_NODE ?? '/usr/bin/node'
/** The children's V8 coverage joins the suite's (c8). */
const COVERAGE: Record<string, string> =
  process.env.NODE_V8_COVERAGE === undefined
    ? {}
    : { NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE }

test("the range is package.json's engines, and versions are compared as semver " +
  'ranges', async (t) => {
  const { engines } = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8')
  ) as { engines: { node: string } }
  t.equal(requiredNode(), engines.node)
  t.equal(
    nodeVersionProblem(process.versions.node),
    undefined,
    `this Node.js (${process.versions.node}) is supported`
  )
  t.equal(nodeVersionProblem('22.19.0', '>=22.19'), undefined)
  t.equal(nodeVersionProblem('24.0.0', '>=22.19'), undefined)
  t.equal(
    nodeVersionProblem('22.18.9', '>=22.19'),
    'customs-gateway needs Node.js >=22.19 (package.json engines); this is Node.js 22.18.9: ' +
    'install a supported version (docs/operations.md)'
  )
  t.type(nodeVersionProblem('20.20.2', '>=22.19'), 'string')
})

test('on an older Node.js the entry exits with one line naming the version needed, before undici ' +
  'is loaded', async (t) => {
  const probe = spawnSync(OLD_NODE, ['-p', 'process.versions.node'], { encoding: 'utf8' })
  if (probe.error !== undefined || probe.status !== 0) {
    t.fail(
      `no older Node.js at ${OLD_NODE} (set OLD_NODE to one below ${requiredNode()}; .ci/run does)`
    )
    return
  }
  const version = probe.stdout.trim()
  t.type(
    nodeVersionProblem(version),
    'string',
    `${OLD_NODE} is Node.js ${version}, below ${requiredNode()}`
  )
  const child = spawn(OLD_NODE, ['--import', 'tsx', 'src/main.ts'], {
    env: { PATH: process.env.PATH ?? '', ...COVERAGE, PORT: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => {
    child.kill('SIGKILL')
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  const [code] = await once(child, 'exit')
  t.equal(code, 1, 'exit status 1')
  t.same(
    stderr.trim().split('\n'),
    [
      `customs-gateway needs Node.js ${requiredNode()} (package.json engines); this is Node.js ` +
      `${version}: install a supported version (docs/operations.md)`
    ],
    'one line on stderr, no stack trace'
  )
  t.equal(stdout, '', 'nothing started')
})

test('on a supported Node.js the entry starts the gateway', async (t) => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      PATH: process.env.PATH ?? '',
      ...COVERAGE,
      PORT: '0',
      HOST: '127.0.0.1',
      PRESSURE_MAX_EVENT_LOOP_DELAY_MS: '0'
    },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  t.teardown(() => { child.kill('SIGKILL') })
  let listening: string | undefined
  for await (const line of createInterface({ input: child.stdout })) {
    const msg = String((JSON.parse(line) as { msg?: unknown }).msg)
    if (msg.startsWith('Server listening')) {
      listening = msg
      break
    }
  }
  t.match(listening, /^Server listening at http:\/\/127\.0\.0\.1:\d+$/)
  const exited = once(child, 'exit')
  child.kill('SIGTERM')
  t.same(await exited, [0, null], 'and closes on SIGTERM')
})
