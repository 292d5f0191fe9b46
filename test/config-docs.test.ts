import { readFile } from 'node:fs/promises'
import { test } from 'tap'
import { loadConfig } from '../src/config/load.ts'
import { ConfigSchema } from '../src/config/schema.ts'
import {
  CONFIG_DOCS, DEPLOYMENT, groupOf, renderEnvExample
} from '../scripts/docs/configuration-reference.ts'

const root = new URL('../', import.meta.url)

test('the settings reference and .env.example are what npm run config-docs writes', async (t) => {
  for (const [path, render] of Object.entries(CONFIG_DOCS)) {
    const committed = await readFile(new URL(path, root), 'utf8')
    t.equal(committed, render(), `${path} is current (run npm run config-docs)`)
  }
})

test('the reference has a row per setting and OpenTelemetry variable: at most 60', async (t) => {
  const text = await readFile(new URL('docs/reference/configuration.md', root), 'utf8')
  const rows = text.split('\n').filter(line => /^\| `[A-Z]/.test(line))
  t.equal(rows.length, Object.keys(ConfigSchema.properties).length + 6)
  t.ok(rows.length <= 60, `${rows.length} rows`)
  t.ok(rows.some(row => row.includes('may be given as a file, `REDIS_URL_FILE`')),
    'a secret\'s file beside it, not a row of its own')
})

test('every setting belongs to a named group of the reference', async (t) => {
  const ungrouped = Object.keys(ConfigSchema.properties).filter(name => groupOf(name).id === 'other')
  t.same(ungrouped, [], 'give these a group in scripts/docs/configuration-reference.ts')
})

test('.env.example names each deployment setting once, with its default, and loads', async (t) => {
  const text = renderEnvExample()
  const assignments = text.split('\n').filter(line => /^(# )?[A-Z][A-Z0-9_]*=/.test(line)).map(line => line.replace(/^# /, ''))
  const names = assignments.map(line => line.slice(0, line.indexOf('=')))
  const settings = Object.keys(ConfigSchema.properties)
  t.same(names.sort(), [...DEPLOYMENT].sort(), 'each deployment setting once, and no other name')
  t.same(DEPLOYMENT.filter(name => !settings.includes(name)), [], 'each a setting of the schema')
  t.match(text, /docs\/reference\/configuration\.md describes\n# every setting/,
    'and a pointer to the reference for the rest')
  const env = Object.fromEntries(text.split('\n').filter(line => /^[A-Z][A-Z0-9_]*=/.test(line)).map(line => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]))
  const defaults = loadConfig({}) as Record<string, unknown>
  for (const [name, value] of Object.entries(env)) {
    t.equal(value, typeof defaults[name] === 'object' ? JSON.stringify(defaults[name]) : String(defaults[name]), `${name} shows its default`)
  }
  t.same(loadConfig(env), defaults, 'loaded as it is, it is the default configuration')
})
