import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { test } from 'tap'

const run = promisify(execFile)

// npm ci prints an ERESOLVE block when an installed package is outside a
// range some package asks for (a peer range included) and installs it anyway;
// `npm ls --all` names the same packages as "invalid" and exits 1. The
// installed tree is the lockfile's (npm ci), so this holds the lockfile to it.
test('every installed package satisfies every range that asks for it, peer ranges ' +
  'included', async (t) => {
  const root = new URL('../..', import.meta.url)
  const { stdout } = await run('npm', ['ls', '--all', '--json'], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024
  }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '{}' }))
  const tree = JSON.parse(stdout) as { problems?: string[]; dependencies?: object }
  t.ok(tree.dependencies, 'npm ls read the tree')
  t.same(tree.problems ?? [], [], 'no invalid, missing or extraneous package')
})
