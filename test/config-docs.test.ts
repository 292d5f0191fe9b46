import { readFile } from 'node:fs/promises'
import { test } from 'tap'
import { loadConfig } from '../src/config/load.ts'
import { ConfigSchema } from '../src/config/schema.ts'
import { CONFIG_DOCS, groupOf, renderEnvExample } from '../scripts/config-reference.ts'

const root = new URL('../', import.meta.url)

test('docs/configuration.md and .env.example are what npm run config-docs writes from the config schema', async (t) => {
  for (const [path, render] of Object.entries(CONFIG_DOCS)) {
    const committed = await readFile(new URL(path, root), 'utf8')
    t.equal(committed, render(), `${path} is current (run npm run config-docs)`)
  }
})

test('every setting belongs to a named group of the reference', async (t) => {
  const ungrouped = Object.keys(ConfigSchema.properties).filter(name => groupOf(name).id === 'other')
  t.same(ungrouped, [], 'give these a group in scripts/config-reference.ts')
})

test('.env.example names every setting once with its default, nothing else, and loads as it is', async (t) => {
  const text = renderEnvExample()
  const assignments = text.split('\n').filter(line => /^(# )?[A-Z][A-Z0-9_]*=/.test(line)).map(line => line.replace(/^# /, ''))
  const names = assignments.map(line => line.slice(0, line.indexOf('=')))
  const settings = Object.keys(ConfigSchema.properties)
  t.same(names.filter(name => !name.startsWith('OTEL_')).sort(), [...settings].sort(), 'each setting once, and no name the schema does not hold')
  const env = Object.fromEntries(text.split('\n').filter(line => /^[A-Z][A-Z0-9_]*=/.test(line)).map(line => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]))
  const defaults = loadConfig({}) as Record<string, unknown>
  for (const [name, value] of Object.entries(env)) {
    t.equal(value, typeof defaults[name] === 'object' ? JSON.stringify(defaults[name]) : String(defaults[name]), `${name} shows its default`)
  }
  t.same(loadConfig(env), defaults, 'loaded as it is, it is the default configuration')
})
