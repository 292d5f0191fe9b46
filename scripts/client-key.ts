import { parseArgs } from 'node:util'
import { clientsFileProblems, type ClientEntry } from '../src/auth/clients.ts'
import { generateClientKey, hashClientKey } from '../src/auth/keys.ts'
import { SCOPES } from '../src/catalogue/scopes.ts'

/**
 * `npm run client-key -- --name yard-app --scopes customs:read,sp2:read [--max 600 --window "1 minute"] [--events all]`
 * Creates a client key, prints it once, and prints the entry to add to CLIENTS_FILE
 * (which holds only the key's SHA-256). See docs/deployment.md, "Clients and keys".
 */
const USAGE = `usage: npm run client-key -- --name <name> --scopes <scope,scope> [--max <requests>] [--window <duration>] [--events own|all]
scopes: ${SCOPES.join(', ')}
events: which booked events its WebSockets receive: own (default: those of its own writes) or all`

function fail (message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`)
  process.exit(1)
}

let values: { name?: string, scopes?: string, max?: string, window?: string, events?: string }
try {
  ({ values } = parseArgs({
    options: { name: { type: 'string' }, scopes: { type: 'string' }, max: { type: 'string' }, window: { type: 'string' }, events: { type: 'string' } },
    strict: true,
    allowPositionals: false
  }))
} catch (error) {
  fail((error as Error).message)
}
if (values.name === undefined || values.scopes === undefined) fail('--name and --scopes are required')

const key = generateClientKey()
const rateLimit = {
  ...(values.max === undefined ? {} : { max: Number(values.max) }),
  ...(values.window === undefined ? {} : { timeWindow: values.window })
}
const entry = {
  name: values.name,
  keySha256: hashClientKey(key),
  scopes: values.scopes.split(',').map(s => s.trim()).filter(s => s !== ''),
  ...(values.events === undefined ? {} : { events: values.events }),
  ...(Object.keys(rateLimit).length === 0 ? {} : { rateLimit })
} as ClientEntry
const problems = clientsFileProblems([entry])
if (problems.length > 0) fail(problems.map(p => p.replace(/^entry 1 \([^)]*\): /, '')).join('\n'))

process.stdout.write(`Client key for ${entry.name} (shown once; hand it over through your secret store, never by chat or e-mail):

  ${key}

Add this entry to the JSON array in CLIENTS_FILE and restart the gateway:

  ${JSON.stringify(entry)}
`)
