import { mkdir, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateArtefacts } from '../src/openapi-document.ts'

/**
 * `npm run openapi`: regenerates the committed OpenAPI document and the
 * glossary from the code. test/openapi.test.ts fails when they differ.
 */
const root = new URL('../', import.meta.url)

for (const [path, text] of Object.entries(await generateArtefacts())) {
  const file = fileURLToPath(new URL(path, root))
  await mkdir(dirname(file), { recursive: true })
  await writeFile(file, text)
  process.stdout.write(`wrote ${path} (${Buffer.byteLength(text)} bytes)\n`)
}
