import { spawnSync } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  ANSWER_EXAMPLES_PATH,
  generateAnswerExamples,
  generateArtefacts,
  renderDocument
} from './docs/openapi-document.ts'

/**
 * `npm run openapi`: regenerates the committed answer examples, OpenAPI
 * document, glossary, hub-operations page, hub profile schema and the
 * reference pages (docs/reference/) from the code. Drift tests fail when the
 * committed ones differ.
 *
 * The examples come first (what the gateway answers on the sandbox); the
 * document includes them as the app is built, from the imported JSON, so the
 * rest is written by a fresh process that imports the new examples.
 */
const root = new URL('../', import.meta.url)

async function write (path: string, text: string): Promise<void> {
  const file = fileURLToPath(new URL(path, root))
  await mkdir(dirname(file), { recursive: true })
  await writeFile(file, text)
  process.stdout.write(`wrote ${path} (${Buffer.byteLength(text)} bytes)\n`)
}

if (process.argv.includes('--documents')) {
  for (const [path, text] of Object.entries(await generateArtefacts())) await write(path, text)
} else {
  await write(ANSWER_EXAMPLES_PATH, renderDocument(await generateAnswerExamples()))
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), '--documents'],
    { stdio: 'inherit' }
  )
  process.exitCode = child.status ?? 1
}
