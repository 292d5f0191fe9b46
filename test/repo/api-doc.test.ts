import { readFile } from 'node:fs/promises'
import { Lexer, type Token, type Tokens } from 'marked'
import { test } from 'tap'

// docs/api.md is hand-written for the web developer; its route table must
// still name every route the OpenAPI document has, with the scope the
// document gives it. A row may name several routes at once: a `{a,b}` in a
// path stands for each of its alternatives (a `{name}` without a comma is
// a path parameter, as in the document).

const ROOT = new URL('../../', import.meta.url)

interface Row { routes: string[], scopes: string[] }

/** The code spans of a table cell: `GET /path` routes, or scopes. */
function codeSpans (cell: Tokens.TableCell): string[] {
  return cell.tokens.filter((token): token is Tokens.Codespan => token.type === 'codespan')
    .map(token => token.text)
}

/** `/v1/customs/{bc20,bc23}/containers` as one path per alternative. */
function expand (route: string): string[] {
  const match = /\{([^{}]*,[^{}]*)\}/.exec(route)
  if (match === null) return [route]
  return match[1]!.split(',').flatMap(choice =>
    expand(route.slice(0, match.index) + choice + route.slice(match.index + match[0].length)))
}

/** The rows of the table under `## Routes`. */
function routeRows (markdown: string): Row[] {
  const tokens: Token[] = new Lexer().lex(markdown)
  const start = tokens.findIndex(token =>
    token.type === 'heading' && token.depth === 2 && token.text === 'Routes')
  const section = tokens.slice(start + 1)
  const end = section.findIndex(token => token.type === 'heading' && token.depth === 2)
  const table = section.slice(0, end).find((token): token is Tokens.Table => token.type === 'table')
  if (start === -1 || table === undefined) return []
  return table.rows.map(([route, scope]) => ({
    routes: codeSpans(route!).flatMap(expand),
    scopes: codeSpans(scope!)
  }))
}

test('expand: each alternative of a brace list, path parameters kept', async (t) => {
  t.same(expand('GET /v1/customs/{bc16,bc20}/x/{npwp}'),
    ['GET /v1/customs/bc16/x/{npwp}', 'GET /v1/customs/bc20/x/{npwp}'])
  t.same(expand('GET /health/live'), ['GET /health/live'])
})

test('docs/api.md, Routes: every route of the OpenAPI document, with its scope', async (t) => {
  const rows = routeRows(await readFile(new URL('docs/api.md', ROOT), 'utf8'))
  const documented = new Map(rows.flatMap(row => row.routes.map(route => [route, row.scopes])))
  const doc = JSON.parse(await readFile(new URL('openapi/openapi.json', ROOT), 'utf8')) as {
    paths: Record<string, Record<string, { security?: Array<{ bearerAuth?: string[] }> }>>
  }
  const routes = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      route: `${method.toUpperCase()} ${path}`,
      scopes: operation.security?.flatMap(requirement => requirement.bearerAuth ?? []) ?? []
    })))
  t.ok(routes.length > 20, `${routes.length} routes in the document`)
  for (const { route, scopes } of routes) {
    t.ok(documented.has(route), `${route} has a row`)
    t.same(documented.get(route), scopes, `${route}: its row names the scopes ${scopes.join(', ')}`)
  }
  const known = new Set([...routes.map(({ route }) => route), 'GET /docs', 'GET /openapi.json'])
  const unknown = [...documented.keys()].filter(route => !known.has(route))
  t.same(unknown, [], 'every route of the table is one the gateway has')
})
