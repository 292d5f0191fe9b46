import { readFile } from 'node:fs/promises'
import t from 'tap'
import {
  generateFromDocument,
  generateTypes,
  TYPES_URL
} from '../../clients/typescript/scripts/openapi-types.ts'

const REGENERATE = 'run `npm run client` and commit the result'

t.test('drift: the committed client types are what openapi/openapi.json gives', async (t) => {
  const committed = await readFile(TYPES_URL, 'utf8')
  const generated = await generateFromDocument()
  const a = committed.split('\n')
  const b = generated.split('\n')
  const line = a.findIndex((text, i) => text !== b[i])
  t.ok(
    committed === generated,
    committed === generated
      ? 'the same'
      : `differs at line ${line + 1} (${JSON.stringify(a[line])} / ${JSON.stringify(b[line])}): ` +
        `${REGENERATE}`
  )
})

t.test('the types follow the document: a changed schema gives changed types', async (t) => {
  const doc = JSON.parse(
    await readFile(new URL('../../openapi/openapi.json', import.meta.url), 'utf8')
  ) as { components: { schemas: { ErrorEnvelope: { properties: Record<string, unknown> } } } }
  doc.components.schemas.ErrorEnvelope.properties.hint = {
    type: 'string',
    description: 'A field the document does not have'
  }
  const text = await generateTypes(JSON.stringify(doc))
  t.match(text, /\bhint\?: string;/)
  t.not(text, await generateFromDocument())
})
