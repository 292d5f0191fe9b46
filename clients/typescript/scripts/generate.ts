import { writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { generateFromDocument, TYPES_URL } from './openapi-types.ts'

/** `npm run client`: regenerates src/openapi.ts from openapi/openapi.json. */
const text = await generateFromDocument()
await writeFile(TYPES_URL, text)
process.stdout.write(`wrote ${fileURLToPath(TYPES_URL)} (${Buffer.byteLength(text)} bytes)\n`)
