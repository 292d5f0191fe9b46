// tap's `before` step (package.json): brings dist/ up to date with src/ before any test file
// runs, as the tests that start the gateway the way the container and `npm start` do
// (`node dist/main.js`) need it. The build is incremental (tsconfig.build.json): when nothing
// changed since `npm ci` or the last build, it checks and writes nothing.
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../..', import.meta.url))
const tsc = fileURLToPath(import.meta.resolve('typescript/bin/tsc'))
// The compiler is no code of ours: no coverage of it, no test-runner loader in it.
const env = { ...process.env }
delete env.NODE_V8_COVERAGE
delete env.NODE_OPTIONS
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
  cwd: root,
  stdio: 'inherit',
  env
})
