import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Lexer, type Token, type Tokens } from 'marked'
import { test } from 'tap'
import { sandboxEnv, startSandbox } from '../../src/sandbox/index.ts'

// The day-one commands of docs/hub.md ("Probing a hub"), run as written (npm, the probe, jq)
// by a shell against the sandbox playing a hub variant nobody here wrote: the file the recipe
// writes is JSON, the profile in it fits the hub.

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const VARIANT = join(ROOT, 'test/fixtures/profiles/variant-hub.json')

/** The code blocks in a token and the tokens it holds (a list's items too). */
function codeIn (token: Token): Tokens.Code[] {
  if (token.type === 'code') return [token as Tokens.Code]
  const inner = [
    ...('items' in token && Array.isArray(token.items) ? token.items as Token[] : []),
    ...('tokens' in token && Array.isArray(token.tokens) ? token.tokens : [])
  ]
  return inner.flatMap(codeIn)
}

/** The commands of the first `sh` block after the heading `heading`, continued lines joined. */
function commandsUnder (file: string, heading: string): string[] {
  const tokens = new Lexer().lex(readFileSync(file, 'utf8'))
  const at = tokens.findIndex(t => t.type === 'heading' && (t as Tokens.Heading).text === heading)
  const block = tokens.slice(at + 1).flatMap(codeIn).find(code => code.lang === 'sh')
  if (at < 0 || block === undefined) throw new Error(`no sh block under "${heading}" in ${file}`)
  return block.text.replace(/\\\n\s*/g, '').split('\n').filter(line => line.trim() !== '')
}

interface Ran { code: number | null, stderr: string }

function sh (command: string, cwd: string, env: Record<string, string>): Promise<Ran> {
  const child = spawn('sh', ['-c', command], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  return new Promise(resolve => child.on('close', code => resolve({ code, stderr })))
}

test('docs/hub.md, day one: the commands as written write JSON, and a profile that fits', {
  timeout: 600_000
}, async (t) => {
  const commands = commandsUnder(join(ROOT, 'docs/hub.md'), 'Day one')
  t.equal(commands.length, 4, commands.join('\n'))
  const sandbox = await startSandbox({ profile: VARIANT })
  t.teardown(() => sandbox.close())
  // The operator's checkout: the repository's files, and a place of its own for what they write.
  const cwd = mkdtempSync(join(tmpdir(), 'probe-docs-'))
  t.teardown(() => rmSync(cwd, { recursive: true, force: true }))
  for (const name of ['package.json', 'node_modules', 'src', 'deploy', 'tsconfig.json']) {
    symlinkSync(join(ROOT, name), join(cwd, name))
  }
  const home = process.env.HOME ?? cwd
  const env = { PATH: process.env.PATH ?? '', HOME: home, ...sandboxEnv(sandbox.url) }

  const codes: Array<number | null> = []
  for (const command of commands) {
    const { code, stderr } = await sh(command, cwd, env)
    codes.push(code)
    t.notMatch(stderr, /probe-hub: /, `${command.slice(0, 60)}…: no error of the probe`)
  }
  t.same(codes, [1, 1, 0, 0], 'the variant differs from the documented profile, fits the proposed')
  const text = readFileSync(join(cwd, 'probe.json'), 'utf8')
  const report = JSON.parse(text) as { profile: { name: string } }
  t.equal(report.profile.name, 'documented-probed', 'probe.json is the report, as JSON')
  const kept = JSON.parse(readFileSync(join(cwd, 'our-hub.json'), 'utf8')) as unknown
  t.same(kept, report.profile, 'jq took the profile out of it')
})
