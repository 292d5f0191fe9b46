import { readFileSync } from 'node:fs'
import satisfies from 'semver/functions/satisfies.js'

/**
 * The Node.js versions the gateway runs on: package.json's `engines.node`,
 * read from the file (beside src/ and dist/ alike), so that the check and
 * what npm shows cannot differ. This module imports nothing of the gateway:
 * it must run on any Node.js, before a dependency that needs a newer one is loaded.
 */
export function requiredNode (): string {
  const { engines } = JSON.parse(
    readFileSync(new URL('../package.json', import.meta.url), 'utf8')
  ) as { engines: { node: string } }
  return engines.node
}

/**
 * The one line to print when `version` (such as process.versions.node) is outside `range`;
 * undefined when it is inside.
 */
export function nodeVersionProblem (
  version: string,
  range: string = requiredNode()
): string | undefined {
  if (satisfies(version, range)) return undefined
  return `customs-gateway needs Node.js ${range} (package.json engines); this is Node.js ` +
    `${version}: install a supported version (docs/operations.md)`
}
