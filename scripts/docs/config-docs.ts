import { writeFile } from 'node:fs/promises'
import { CONFIG_DOCS } from './configuration-reference.ts'

/**
 * `npm run config-docs`: writes docs/reference/configuration.md and .env.example from
 * ConfigSchema (src/config/schema.ts). Run it after adding or changing a
 * setting; test/config-docs.test.ts fails while a committed file differs.
 * scripts/docs/configuration-reference.ts says how settings are grouped.
 */
const root = new URL('../../', import.meta.url)

for (const [path, render] of Object.entries(CONFIG_DOCS)) {
  const text = render()
  await writeFile(new URL(path, root), text)
  process.stdout.write(`wrote ${path} (${Buffer.byteLength(text)} bytes)\n`)
}
