import { OPERATIONS, type OperationId } from '../../src/catalogue/operations.ts'
import type { HubOperation } from '../../src/catalogue/types.ts'
import { BUILT_IN } from '../../src/profile/built-in.ts'
import { resolveProfile, type OperationProfile } from '../../src/profile/resolve.ts'
import { HubProfileSchema, HubProfileShape, PATTERN_FORMS } from '../../src/profile/schema.ts'
import { code, generatedNote, table } from './markdown.ts'

/**
 * docs/reference/profile.md: every member of the hub profile with its type, its default and
 * what it means, from the profile's schema (src/profile/schema.ts: the words) and the
 * documented hub the gateway falls back on (src/profile/built-in.ts, and each operation's
 * catalogue entry as the resolver reads it: the defaults). Written by `npm run openapi`; a
 * test fails when the committed page differs.
 */

export const PROFILE_REFERENCE_PATH = 'docs/reference/profile.md'

/** The part of a JSON Schema the page reads. */
export interface SchemaNode {
  type?: string
  description?: string
  enum?: unknown[]
  pattern?: string
  minimum?: number
  maximum?: number
  minItems?: number
  maxItems?: number
  maxLength?: number
  properties?: Record<string, SchemaNode>
  patternProperties?: Record<string, SchemaNode>
  items?: SchemaNode
  anyOf?: SchemaNode[]
}

/** One member of the profile: its path in the file, and its schema. */
export interface Member {
  path: string
  schema: SchemaNode
}

/** A schema as plain JSON: TypeBox's objects carry symbol keys, which JSON leaves out. */
function plain (schema: unknown): SchemaNode {
  return JSON.parse(JSON.stringify(schema)) as SchemaNode
}

/** Every member under `schema`, depth first, `parent.member`; a list's items as `list[]`. */
export function membersOf (schema: SchemaNode, parent = ''): Member[] {
  return Object.entries(schema.properties ?? {}).flatMap(([name, node]) => {
    const path = parent === '' ? name : `${parent}.${name}`
    const items = node.items?.properties === undefined ? [] : membersOf(node.items, `${path}[]`)
    return [{ path, schema: node }, ...membersOf(node, path), ...items]
  })
}

/** The schema of the file, and of one operation's entry in the words that fit every one. */
export function profileSchemas (): { file: SchemaNode, entry: SchemaNode } {
  const file = plain(HubProfileSchema)
  const entries = plain(HubProfileShape).properties?.operations?.patternProperties ?? {}
  const entry = Object.values(entries)[0]
  if (entry === undefined) throw new Error('the profile shape has no operation entry')
  return { file, entry }
}

/** `a header name` out of `a header name: letters, …`, for a pattern's short form. */
function patternWords (pattern: string): string {
  const words = PATTERN_FORMS[pattern]
  if (words === undefined) return `text matching ${code(pattern)}`
  return words.split(': ')[0]!.replace(/,? such as .*$/, '')
}

/** The type column: the JSON type with its bounds, in words. */
function typeOf (node: SchemaNode): string {
  if (node.anyOf !== undefined) return node.anyOf.map(typeOf).join(', or ')
  if (node.enum !== undefined) return `one of ${node.enum.map(v => code(String(v))).join(', ')}`
  const bounds = (min?: number, max?: number) =>
    min === undefined && max === undefined ? '' : ` ${min ?? 0} to ${max ?? '…'}`
  switch (node.type) {
    case 'string':
      return node.pattern === undefined ? 'text' : patternWords(node.pattern)
    case 'integer':
      return `whole number${bounds(node.minimum, node.maximum)}`
    case 'array': {
      const count = node.maxItems === undefined ? '' : ` of at most ${node.maxItems}`
      return `a list${count}, each ${node.items === undefined ? 'any JSON' : typeOf(node.items)}`
    }
    case 'boolean': return '`true` or `false`'
    case 'object': return 'an object'
    default: return 'any JSON'
  }
}

function rendered (value: unknown): string {
  return code(typeof value === 'string' ? value : JSON.stringify(value))
}

/** The value at a dotted path of `document`, or undefined. */
function at (document: unknown, path: string): unknown {
  let value = document
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
    value = (value as Record<string, unknown>)[part]
  }
  return value
}

/**
 * What the gateway takes for each member left out: the documented hub's values, as the
 * resolver gives them, for the members of the file and of `defaults`.
 */
function documentedDefaults (): Record<string, unknown> {
  const { document } = resolveProfile({
    UPSTREAM_PROFILE_FILE: undefined,
    UPSTREAM_CREDENTIALS: 'static',
    UPSTREAM_HUB_URL: undefined,
    UPSTREAM_BASE_URL: undefined
  })
  const { operations: _operations, defaults: _defaults, name: _name, ...file } = document
  return {
    ...file,
    prefixes: BUILT_IN.prefixes,
    defaults: { ...BUILT_IN.settings, notFound: 'empty' }
  }
}

/** Members that hold other members have their rows; a list of objects too. */
function holdsMembers (node: SchemaNode): boolean {
  return node.properties !== undefined || node.items?.properties !== undefined
}

/** Members whose default is each operation's own (the table of operations). */
const OPERATION_OWN = new Set(['credentials', 'answerKey', 'service', 'prefix', 'path', 'params'])

/** One row per member: the member, its type, its default, what it means. */
function memberRows (members: Member[], defaults: unknown): string[][] {
  return members.map(({ path, schema }) => {
    const value = holdsMembers(schema) ? undefined : at(defaults, path)
    const words = schema.description ?? ''
    // The schema's words name some defaults themselves; the column says it once.
    const meaning = value === undefined ? words : words.replace(/ \(default [^()]*\)$/, '')
    const fallback = OPERATION_OWN.has(path) ? 'the operation\'s' : ''
    return [code(path), typeOf(schema), value === undefined ? fallback : rendered(value), meaning]
  })
}

function answerKeyOf (op: OperationProfile): string {
  return op.answerKey === undefined ? 'the answer itself' : code(op.answerKey)
}

/** One row per operation: the defaults of its entry, which its catalogue entry gives. */
function operationRows (): string[][] {
  const { operations } = resolveProfile({
    UPSTREAM_PROFILE_FILE: undefined,
    UPSTREAM_CREDENTIALS: 'static',
    UPSTREAM_HUB_URL: undefined,
    UPSTREAM_BASE_URL: undefined
  })
  return (OPERATIONS as readonly HubOperation[]).map(op => {
    const resolved = operations.get(op.id as OperationId)
    if (resolved === undefined) throw new Error(`${op.id} is not resolved`)
    const params = resolved.params.map(p => `${p.name}: ${p.upstream}`).join(', ')
    const credentials = [resolved.credentials.apiKey ? 'apiKey' : '',
      resolved.credentials.token ? 'token' : ''].filter(c => c !== '')
    return [
      code(op.id),
      `${op.method}, ${op.response.type === 'record' ? 'a record' : 'a list'}`,
      `${code(resolved.service)}, ${op.area} ${code(resolved.prefix)}`,
      code(resolved.path),
      params === '' ? 'none' : code(params),
      (op.alsoTakes ?? []).map(code).join(', '),
      credentials.length === 0 ? '`[]`' : code(JSON.stringify(credentials)),
      answerKeyOf(resolved),
      op.title
    ]
  })
}

/** The Markdown of docs/reference/profile.md. Deterministic: the same schema, the same page. */
export function renderProfileReference (): string {
  const { file, entry } = profileSchemas()
  const defaults = documentedDefaults()
  const fileMembers = membersOf(file).filter(m =>
    m.path !== 'defaults' && !m.path.startsWith('defaults.') &&
    m.path !== 'operations' && !m.path.startsWith('operations.'))
  const settings = membersOf(file.properties?.defaults ?? {})
  const settingNames = new Set(settings.map(m => m.path))
  const address = membersOf(entry).filter(m => !settingNames.has(m.path))
  const header = ['Member', 'Type', 'Default', 'Meaning']
  return [
    '# Hub profile members',
    '',
    generatedNote('the profile\'s schema (src/profile/schema.ts) and the documented hub ' +
      '(src/profile/built-in.ts, src/catalogue/operations.ts)'),
    '',
    'Every member of a hub profile file (`UPSTREAM_PROFILE_FILE`). Only `name` is required; a ' +
      'member left out takes its default, the documented hub\'s. What a profile is, and how to ' +
      'write and check one: [hub.md](../hub.md#hub-profiles). The same rules as JSON Schema, ' +
      'for editors: `deploy/profiles/profile.schema.json`.',
    '',
    '## The file',
    '',
    table(header, memberRows(fileMembers, defaults)),
    '',
    '## Settings',
    '',
    'Each of these is a member of `defaults`, for every operation, and of each operation\'s ' +
      'entry in `operations`, where it wins over `defaults`. `notFound` is for the operations ' +
      'that answer a list alone.',
    '',
    table(header, memberRows(settings, defaults.defaults)),
    '',
    '## An operation\'s address',
    '',
    'Besides the settings, an operation\'s entry (`operations.<name>`) may hold these. Their ' +
      'defaults are the operation\'s own, in the next table; `cacheTtlSeconds` is for the ' +
      'GET operations alone.',
    '',
    table(header, memberRows(address, {})),
    '',
    '## The operations',
    '',
    'The names `operations` takes, and what each is without a profile entry. **Parameters**: ' +
      'the gateway\'s name of each and the hub\'s, in the order the hub reads them. **May ' +
      'add**: what a hub variant is known to take besides, which `params` may name.',
    '',
    table(['Operation', 'Method, answer', 'Service, prefix', 'Path', 'Parameters', 'May add',
      'Credentials', 'Answer key', 'What it is'], operationRows()),
    ''
  ].join('\n')
}
