import { nodeVersionProblem } from './node-version.ts'

/**
 * The process's entry (npm start, the container's command). On an older
 * Node.js the gateway's dependencies fail while they load, with a stack trace
 * that does not say why (undici on Node 20: "Cannot read properties of
 * undefined (reading 'bind')"); so the version is checked first, by a module
 * that imports nothing of the gateway, and the gateway is imported only then.
 */
const problem = nodeVersionProblem(process.versions.node)
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`)
  process.exit(1)
}
await import('./server.ts')
