import { readFile } from 'node:fs/promises'
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript'

/**
 * The client's types from the gateway's committed OpenAPI document. Shared by
 * `npm run client` (scripts/generate.ts), which writes them, and the test that
 * fails when the committed copy differs from what the document gives.
 */

/** The committed document, and the generated module, from the repository root. */
export const DOCUMENT_URL = new URL('../../../openapi/openapi.json', import.meta.url)
export const TYPES_URL = new URL('../src/openapi.ts', import.meta.url)

/** The text of src/openapi.ts for this document. */
export async function generateTypes (documentText: string): Promise<string> {
  const ast = await openapiTS(JSON.parse(documentText), { silent: true })
  return COMMENT_HEADER.replace(' */', ' * Source: openapi/openapi.json; regenerate with `npm run client`.\n */') + astToString(ast)
}

/** What the committed document gives now. */
export async function generateFromDocument (): Promise<string> {
  return generateTypes(await readFile(DOCUMENT_URL, 'utf8'))
}
