import type { RouteOptions } from 'fastify'
import { ERROR_TABLE, type ErrorCode } from '../../src/errors.ts'
import { FORMATS, REFUSED_CHARACTERS } from '../../src/schemas/formats.ts'
import { code, generatedNote, table } from './markdown.ts'

/**
 * docs/reference/routes.md: every route of the gateway, from its OpenAPI
 * document (method, path, scope, summary, parameters and their rules, the
 * statuses and the error codes behind each) and from the routes the app
 * registers (those the document leaves out: Swagger UI, the document itself,
 * the HEAD twins). Written by `npm run openapi`; a test fails when the
 * committed page differs.
 */

export const ROUTES_REFERENCE_PATH = 'docs/reference/routes.md'

/** The parts of an OpenAPI document this page reads. */
export interface RouteDocument {
  paths: Record<string, Record<string, DocOperation | unknown>>
}

interface ParameterSchema {
  type?: string | string[]
  format?: string
  pattern?: string
  enum?: readonly unknown[]
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  multipleOf?: number
}

interface DocParameter { name: string, in: string, required?: boolean, schema?: ParameterSchema }

interface DocOperation {
  summary?: string
  security?: Array<Record<string, string[]>>
  parameters?: DocParameter[]
  requestBody?: {
    content?: Record<string, {
      schema?: { properties?: Record<string, ParameterSchema>, required?: string[] }
    }>
  }
  responses?: Record<string, { content?: Record<string, { examples?: Record<string, unknown> }> }>
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'])
const PLACES = ['path', 'query', 'header', 'body']
/** What the text formats refuse, said once under the table instead of in every rule. */
const REFUSED = 'refused characters'

interface Operation { method: string, path: string, op: DocOperation }

function isOperation (value: unknown): value is DocOperation {
  return typeof value === 'object' && value !== null && 'responses' in value
}

function operationsOf (doc: RouteDocument): Operation[] {
  return Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item)
    .flatMap(([method, op]) => METHODS.has(method) && isOperation(op)
      ? [{ method: method.toUpperCase(), path, op }]
      : []))
}

/** A parameter's rule in short, in the words the 400 answers use (schemas/formats.ts). */
export function ruleOf (schema: ParameterSchema = {}): string {
  const rules: string[] = []
  const format = Object.entries(FORMATS).find(([name]) => name === schema.format)?.[1].rule
    .replaceAll(REFUSED_CHARACTERS, REFUSED)
  if (schema.enum !== undefined) {
    rules.push(`one of ${schema.enum.map(v => code(String(v))).join(', ')}`)
  }
  if (format !== undefined) rules.push(format)
  // A text format says nothing of the value's shape: its pattern does.
  if (schema.pattern !== undefined && (format === undefined || format.includes(REFUSED))) {
    rules.push(`matches ${code(schema.pattern)}`)
  }
  if (format === undefined && schema.enum === undefined && schema.type !== undefined) {
    rules.push([schema.type].flat().map(type => type === 'boolean' ? 'true or false' : `a ${type}`)
      .join(' or '))
  }
  if (schema.minimum !== undefined) rules.push(`at least ${schema.minimum}`)
  if (schema.maximum !== undefined) rules.push(`at most ${schema.maximum}`)
  if (schema.multipleOf !== undefined) {
    const places = /^0\.(0*)1$/.exec(String(schema.multipleOf))
    rules.push(places === null
      ? `a multiple of ${schema.multipleOf}`
      : `at most ${(places[1] ?? '').length + 1} decimals`)
  }
  if (schema.minLength !== undefined && schema.minLength > 1) {
    rules.push(`at least ${schema.minLength} characters`)
  }
  if (schema.maxLength !== undefined) rules.push(`at most ${schema.maxLength} characters`)
  return rules.join('; ')
}

interface Input { name: string, in: string, required: boolean, rule: string }

function inputsOf (op: DocOperation): Input[] {
  const parameters = (op.parameters ?? []).map(p => ({
    name: p.name, in: p.in, required: p.required === true, rule: ruleOf(p.schema)
  }))
  const body = op.requestBody?.content?.['application/json']?.schema
  const required = new Set(body?.required ?? [])
  const fields = Object.entries(body?.properties ?? {}).map(([name, schema]) => ({
    name, in: 'body', required: required.has(name), rule: ruleOf(schema)
  }))
  return [...parameters, ...fields]
    .sort((a, b) => PLACES.indexOf(a.in) - PLACES.indexOf(b.in))
}

const CODES = Object.keys(ERROR_TABLE)

/** The error codes a route's document gives each status (its examples are keyed by code). */
function answersOf (op: DocOperation): Array<{ status: string, codes: string[] }> {
  return Object.entries(op.responses ?? {}).map(([status, response]) => ({
    status,
    codes: Object.keys(response.content?.['application/json']?.examples ?? {})
      .filter(name => CODES.includes(name))
      .sort((a, b) => CODES.indexOf(a) - CODES.indexOf(b))
  }))
}

function scopeOf (op: DocOperation): string {
  const scopes = (op.security ?? []).flatMap(requirement => Object.values(requirement).flat())
  return scopes.length === 0 ? 'none' : scopes.map(code).join(' and ')
}

/** `/v1/shipments/:blNo` as the document writes it: `/v1/shipments/{blNo}`. */
function documentPath (url: string): string {
  return url.replace(/:([A-Za-z0-9]+)/g, '{$1}')
}

/** The Markdown of docs/reference/routes.md, from the document and the routes the app made. */
export function renderRoutesReference (
  doc: RouteDocument,
  routes: readonly RouteOptions[]
): string {
  const operations = operationsOf(doc)
  const answers = new Map(operations.map(o => [o, answersOf(o.op)]))
  // Every code each error status is answered with, on any route: a route that answers a
  // status with all of them writes the status alone.
  const codesByStatus = new Map<string, string[]>()
  for (const { status, codes } of [...answers.values()].flat()) {
    const known = codesByStatus.get(status) ?? []
    codesByStatus.set(status, [...known, ...codes.filter(name => !known.includes(name))])
  }
  const statuses = [...codesByStatus].filter(([, codes]) => codes.length > 0)
    .map(([status, codes]): [string, string[]] =>
      [status, [...codes].sort((a, b) => CODES.indexOf(a) - CODES.indexOf(b))])
    .sort(([a], [b]) => a.localeCompare(b))

  const inputs = new Map<string, Input & { routes: string[] }>()
  const rows = operations.map(operation => {
    const { method, path, op } = operation
    const route = `${method} ${path}`
    const own = inputsOf(op)
    for (const input of own) {
      const key = `${input.in}\u0000${input.name}\u0000${input.rule}`
      const known = inputs.get(key)
      if (known === undefined) inputs.set(key, { ...input, routes: [route] })
      else known.routes.push(route)
    }
    const answered = (answers.get(operation) ?? []).map(({ status, codes }) =>
      codes.length === (codesByStatus.get(status) ?? []).length
        ? status
        : `${status} (${codes.join(', ')})`)
    return [
      code(route),
      scopeOf(op),
      op.summary ?? '',
      own.map(input => `${code(input.name)}${input.required ? '*' : ''}`).join(', '),
      answered.join(', ')
    ]
  })

  return [
    '# Routes',
    '',
    generatedNote('the routes the app registers and its OpenAPI document'),
    '',
    'Every route of the gateway as built with the default settings. **Scope**: what the ' +
      'client key (`Authorization: Bearer <key>`) must hold. **Inputs**: `*` marks a ' +
      'required one; their rules are under [Inputs](#inputs). **Answers**: an error status ' +
      'alone stands for all its codes under [Error statuses](#error-statuses); in brackets, ' +
      'the only ones the route answers it with.',
    '',
    table(['Route', 'Scope', 'Summary', 'Inputs', 'Answers'], rows),
    '',
    ...outsideDocument(operations, routes),
    '',
    '## Error statuses',
    '',
    'What each code means and when it is answered: [errors.md](errors.md).',
    '',
    table(['Status', 'Codes'], statuses.map(([status, codes]) => [status, codes.join(', ')])),
    '',
    ...unlisted(answers),
    '',
    '## Inputs',
    '',
    table(['Input', 'In', 'Rule'], inputRows([...inputs.values()], operations.length)),
    '',
    `Text inputs refuse ${REFUSED_CHARACTERS} (the ${REFUSED} above).`,
    ''
  ].join('\n')
}

/** The rows of the inputs table; where one name has several rules, each says where it holds. */
function inputRows (
  inputs: ReadonlyArray<Input & { routes: string[] }>,
  total: number
): string[][] {
  const sorted = [...inputs].sort((a, b) =>
    PLACES.indexOf(a.in) - PLACES.indexOf(b.in) || a.name.localeCompare(b.name))
  return sorted.map(input => {
    const twins = sorted.filter(other => other.in === input.in && other.name === input.name)
    const where = twins.length > 1 && input.routes.length < total
      ? ` (${input.routes.map(code).join(', ')})`
      : ''
    return [code(input.name), input.in, `${input.rule}${where}`]
  })
}

/** Lines naming the routes the app answers beyond the document's operations. */
function outsideDocument (
  operations: readonly Operation[],
  routes: readonly RouteOptions[]
): string[] {
  const documented = new Set(operations.map(o => `${o.method} ${o.path}`))
  const registered = routes.flatMap(route => [route.method].flat()
    .map(method => ({ method, path: documentPath(route.url), scope: route.config?.scope })))
  const gets = new Set(registered.filter(r => r.method === 'GET').map(r => r.path))
  const heads = new Set(registered.filter(r => r.method === 'HEAD').map(r => r.path))
  const headless = [...gets].filter(path => !heads.has(path))
  const others = registered
    .filter(r => r.method !== 'HEAD' && !documented.has(`${r.method} ${r.path}`))
  const lines = [headless.length === 0
    ? 'Every GET route also answers HEAD.'
    : `Every GET route but ${headless.map(code).join(', ')} also answers HEAD.`]
  if (others.length > 0) {
    const listed = [...new Set(others.map(r => code(`${r.method} ${r.path}`)))].join(', ')
    const keyless = others.every(r => r.scope === null)
    lines.push('', `Not in the OpenAPI document${keyless ? ', and answered without a key' : ''}: ` +
      `${listed}.`)
  }
  return lines
}

/** A line naming the codes of the error table that no route's document lists. */
function unlisted (answers: ReadonlyMap<Operation, Array<{ codes: string[] }>>): string[] {
  const listed = new Set([...answers.values()].flat().flatMap(answer => answer.codes))
  const rest = (Object.keys(ERROR_TABLE) as ErrorCode[]).filter(name => !listed.has(name))
  if (rest.length === 0) return []
  const named = rest.map(name => `${ERROR_TABLE[name].status} ${name}`).join(', ')
  return [`Codes no route lists: ${named}.`]
}
