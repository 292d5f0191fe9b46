import { readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import Ajv2020 from 'ajv/dist/2020.js'
import { test } from 'tap'
import { PROFILE_SCHEMA_PATH, renderProfileSchema } from '../scripts/docs/profile-schema.ts'
import { OPERATIONS } from '../src/catalogue/operations.ts'
import { ConfigError } from '../src/config/load.ts'
import { loadProfileFile, profileProblems } from '../src/profile/load.ts'
import { writeTempFile } from './helper.ts'

const ROOT = new URL('../', import.meta.url)
const SHIPPED = ['deploy/profiles/documented.json', 'deploy/profiles/public-callers.json']

function problemsOf (file: string): string[] {
  try {
    loadProfileFile(file)
    return []
  } catch (error) {
    if (error instanceof ConfigError) return error.problems
    throw error
  }
}

test('drift: the committed profile schema is what src/profile/schema.ts generates', async (t) => {
  const committed = await readFile(new URL(PROFILE_SCHEMA_PATH, ROOT), 'utf8').catch(() => undefined)
  t.ok(committed === renderProfileSchema(), `${PROFILE_SCHEMA_PATH} is out of date: run \`npm run openapi\` and commit the result`)
})

test('the shipped profiles are valid, for the gateway and for any JSON Schema validator', async (t) => {
  // The package's CommonJS default export, as Node's ESM loader presents it.
  const Ajv = Ajv2020.default
  const ajv = new Ajv({ allErrors: true, strict: true })
  const validate = ajv.compile(JSON.parse(renderProfileSchema()) as object)
  for (const path of SHIPPED) {
    const file = fileURLToPath(new URL(path, ROOT))
    t.same(problemsOf(file), [], `${path}: the gateway finds no problem`)
    t.ok(validate(JSON.parse(await readFile(file, 'utf8'))), `${path}: ajv (strict): ${ajv.errorsText(validate.errors)}`)
  }
})

test('the schema lists every operation of the catalogue, each with the parameters it may take', async (t) => {
  const schema = JSON.parse(renderProfileSchema()) as { properties: { operations: { properties: Record<string, { properties: { params: { properties: object } } }> } } }
  const operations = schema.properties.operations.properties
  t.same(Object.keys(operations), OPERATIONS.map(op => op.id))
  t.same(Object.keys(operations.kontainerbc20?.properties.params.properties ?? {}), ['blDate', 'blNo'], 'its own, then those a variant adds')
  t.same(Object.keys(operations.BC20ByNoBL?.properties.params.properties ?? {}), ['blNo', 'npwp', 'blDate'])
})

test('each problem names its place in the file and the rule, in words', async (t) => {
  t.same(profileProblems({
    name: 'my hub',
    prefixes: { lookup: 'V1/NLE/' },
    defaults: { apiKeyHeader: 'beacukai api key', dateSent: 'DDMMYYYY', nullString: ['null'] },
    operations: { kontainerbc99: {}, 'document_sp2/final': { params: { blNo: 'x' } } }
  }), [
    '$.name: must be a name of 1 to 64 letters, digits and ._-',
    '$.prefixes.lookup: must be an address prefix such as /V1/NLE/INT/AUTH: segments each after a /, no / at the end (or empty)',
    '$.defaults: unknown member "nullString" (known here: apiKeyHeader, tokenHeader, credentials, answerKey, dateSent, dateAnswered, errorFields, nullStrings, failure)',
    '$.defaults.apiKeyHeader: must be one of the forms allowed: The name of the header that carries the API key, or several names: the key is sent under each',
    '$.defaults.dateSent: must be one of "YYYYMMDD", "YYYY-MM-DD"',
    `$.operations: unknown member "kontainerbc99" (known here: ${OPERATIONS.map(op => op.id).join(', ')})`,
    '$.operations["document_sp2/final"].params: unknown member "blNo" (known here: sp2Id)'
  ])
  t.same(profileProblems({ operations: {} }), ['$: is missing its member "name"'])
  t.match(profileProblems([])[0], /^\$: must be an object/)
})

test('the rules a schema cannot say: placeholders, the route\'s path parameters, hub names, regular expressions', async (t) => {
  t.same(profileProblems({
    name: 'x',
    operations: {
      BC20ByNoPib: { path: 'BC20ByNoPib/{npwp}x/{foo}/{nopib}/{nopib}/}', params: { npwp: 'npwp', pibNo: 'nopib' } },
      BC20ByNoBL: { params: { blNo: 'nobl', npwp: 'nobl' } },
      kontainerbc23: { params: { blDate: 'tglBl' } },
      noblbc16: { path: 'noblbc16/{noBl}' },
      'document_sp2/final': { failure: { codes: [{ match: '(', code: 'EMPTY' }] } }
    }
  }), [
    '$.operations.BC20ByNoPib.path: a placeholder must be a whole segment between slashes ("{npwp}x")',
    '$.operations.BC20ByNoPib.path: {foo} names no parameter of this operation (its hub names: npwp, nopib; set `params` to take another)',
    '$.operations.BC20ByNoPib.path: {nopib} appears twice',
    '$.operations.BC20ByNoPib.path: "}" has a brace that opens no placeholder ({name} of a parameter)',
    '$.operations.BC20ByNoBL.params: two parameters have the hub name "nobl"',
    '$.operations.noblbc16.path: {noBl} names no parameter of this operation (its hub names: npwp; set `params` to take another)',
    '$.operations["document_sp2/final"].failure.codes[0].match: is not a regular expression (Invalid regular expression: /(/i: Unterminated group)'
  ])
  t.same(profileProblems({ name: 'x', operations: { BC20ByNoPib: { params: { npwp: 'npwp' } } } }),
    ['$.operations.BC20ByNoPib.params: must include pibNo, a parameter of the route\'s path (/v1/customs/bc20/declarations/:pibNo)'])
})

test('a file that cannot be read or is not JSON is one problem naming the setting and the file', async (t) => {
  t.match(problemsOf('/nonexistent/hub.json'), [/^UPSTREAM_PROFILE_FILE \(\/nonexistent\/hub\.json\): cannot be read \(ENOENT\)$/])
  const notJson = writeTempFile(t, '{ "name": ')
  t.match(problemsOf(notJson), [/^UPSTREAM_PROFILE_FILE \(.*\): is not JSON \(/])
  const wrong = writeTempFile(t, JSON.stringify({ name: 'x', defaults: { tokenHeader: 'Auth Header' } }))
  t.same(problemsOf(wrong), [`UPSTREAM_PROFILE_FILE (${wrong}) $.defaults.tokenHeader: must be a header name: letters, digits and !#$%&'*+.^_\`|~- (no spaces or colons)`])
})
