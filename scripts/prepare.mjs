// npm runs `prepare` after every local `npm ci` and `npm install`: it builds dist/ here, so that
// `npm start` starts the built tree at once instead of compiling first. An install without the
// dev dependencies (`npm ci --omit=dev`, NODE_ENV=production) has no TypeScript to build with;
// it says so and leaves dist/ as it is (the container builds in a stage of its own). Plain
// JavaScript: it runs before anything is built, and tsx is a dev dependency too.
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

let tsc
try {
  tsc = fileURLToPath(import.meta.resolve('typescript/bin/tsc'))
} catch {
  console.log('prepare: TypeScript is not installed (dev dependencies omitted); dist/ not built')
  process.exit(0)
}
const root = fileURLToPath(new URL('..', import.meta.url))
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' })
