import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import GithubSlugger from 'github-slugger'
import { Lexer, walkTokens, type Token, type Tokens } from 'marked'
import { test } from 'tap'

// Every relative link and image in the repository's own markdown must reach
// a file, and a `#anchor` into a markdown file one of its headings (as GitHub
// makes their ids) or an explicit id. A link checker such as
// markdown-link-check would also fetch the web links, which CI cannot reach;
// marked (a parser, so links in code are not links) and github-slugger (the
// ids GitHub gives headings) check what is in the repository, offline.

const root = fileURLToPath(new URL('..', import.meta.url))

/** Folders that hold no Markdown of the repository's own: installed, built or local. */
const NOT_OURS = new Set(['node_modules', 'dist', 'coverage'])

/** Every Markdown file of the repository, in every folder but those and hidden ones. */
function markdownFiles (dir = root): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(entry => {
    if (entry.name.startsWith('.') || NOT_OURS.has(entry.name)) return []
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return markdownFiles(path)
    return entry.name.endsWith('.md') ? [path] : []
  }).sort()
}

/** The text a reader sees of inline tokens: what GitHub makes a heading's id from. */
function plain (tokens: Token[]): string {
  return tokens.map(token => {
    if (token.type === 'html') return ''
    if ('tokens' in token && Array.isArray(token.tokens) && token.tokens.length > 0) return plain(token.tokens)
    return 'text' in token && typeof token.text === 'string' ? token.text : ''
  }).join('')
}

const parsed = new Map<string, Token[]>()
function tokensOf (file: string): Token[] {
  let tokens = parsed.get(file)
  if (tokens === undefined) {
    tokens = new Lexer().lex(readFileSync(file, 'utf8'))
    parsed.set(file, tokens)
  }
  return tokens
}

const anchorCache = new Map<string, Set<string>>()
export function anchorsOf (file: string): Set<string> {
  let anchors = anchorCache.get(file)
  if (anchors !== undefined) return anchors
  anchors = new Set()
  const slugger = new GithubSlugger()
  const found = anchors
  walkTokens(tokensOf(file), (token) => {
    if (token.type === 'heading') found.add(slugger.slug(plain((token as Tokens.Heading).tokens)))
    if (token.type === 'html') for (const match of token.raw.matchAll(/\b(?:id|name)="([^"]+)"/g)) found.add(match[1] ?? '')
  })
  anchorCache.set(file, anchors)
  return anchors
}

interface Link { file: string, href: string }

/** Markdown links and images, and the `href` and `src` of HTML written in the Markdown. */
function linksOf (file: string): Link[] {
  const links: Link[] = []
  walkTokens(tokensOf(file), (token) => {
    if (token.type === 'link' || token.type === 'image') {
      links.push({ file, href: (token as Tokens.Link).href })
    }
    if (token.type === 'html') {
      for (const match of token.raw.matchAll(/\b(?:href|src)="([^"]+)"/g)) {
        links.push({ file, href: match[1] ?? '' })
      }
    }
  })
  return links
}

/** Why a relative link does not resolve, or undefined when it does (web and mail links are not checked). */
function problem ({ file, href }: Link): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return undefined
  const hash = href.indexOf('#')
  const path = decodeURI(hash === -1 ? href : href.slice(0, hash)).replace(/\?.*$/, '')
  const anchor = hash === -1 ? undefined : decodeURIComponent(href.slice(hash + 1))
  const target = path === '' ? file : resolve(dirname(file), path)
  if (!target.startsWith(root)) return 'points outside the repository'
  if (!existsSync(target)) return `no such file: ${relative(root, target)}`
  if (anchor === undefined || !target.endsWith('.md') || statSync(target).isDirectory()) return undefined
  return anchorsOf(target).has(anchor) ? undefined : `no heading or id "${anchor}" in ${relative(root, target)}`
}

const SOME_PAGES = [
  'README.md', 'CHANGELOG.md', 'docs/api.md', 'docs/reference/routes.md', 'test/deploy/README.md'
]

test('every relative link of every Markdown file reaches a file and its #anchor', async (t) => {
  const files = markdownFiles()
  for (const file of SOME_PAGES) t.ok(files.includes(join(root, file)), `${file} is read`)
  t.notOk(files.some(file => file.includes('node_modules')), 'installed packages are not')
  const broken: string[] = []
  let checked = 0
  for (const file of files) {
    for (const link of linksOf(file)) {
      checked++
      const why = problem(link)
      if (why !== undefined) broken.push(`${relative(root, file)}: (${link.href}) ${why}`)
    }
  }
  t.ok(checked > 100, `${checked} links checked`)
  t.same(broken, [], 'no broken link')
})

test('headings get the ids GitHub gives them', async (t) => {
  const anchors = anchorsOf(join(root, 'docs/deployment.md'))
  t.ok(anchors.has('failover-deploycomposesentinelyaml'), 'code spans and punctuation dropped')
  const reference = anchorsOf(join(root, 'docs/reference/configuration.md'))
  t.ok(reference.has('listening-logging-client-connections'), 'commas dropped')
  t.ok(reference.has('hub-calls'), 'explicit ids count')
})

test('the README, docs/, .env.example, deploy/ and the code cite only files of the repository', async (t) => {
  // Files a clone does not have: the hub's description, the contract and the
  // code style the project was built from; docs/hub.md, docs/api.md and
  // ARCHITECTURE.md say in the repository what they said. CHANGELOG.md keeps
  // its history.
  const outside = /\b(?:interface|contract|style)\.md\b/
  const deployFiles = (dir: string): string[] => readdirSync(join(root, dir), { withFileTypes: true })
    .flatMap(entry => entry.isDirectory() ? (entry.name === 'secrets' ? [] : deployFiles(join(dir, entry.name))) : [join(dir, entry.name)])
  const files = [...markdownFiles().map(file => relative(root, file)), '.env.example', ...deployFiles('deploy'), ...codeFiles()]
    .filter(file => file !== 'CHANGELOG.md' && file !== 'test/docs-links.test.ts')
  t.ok(files.includes('src/catalogue/resources.ts'), 'the code is read')
  const citing = files.filter(file => outside.test(readFileSync(join(root, file), 'utf8')))
  t.same(citing, [], 'no citation of interface.md, contract.md or style.md')
})

/** The repository's code: what its comments and descriptions cite. */
function codeFiles (): string[] {
  const walk = (dir: string): string[] => readdirSync(join(root, dir), { withFileTypes: true }).flatMap(entry => {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) return []
    const path = join(dir, entry.name)
    return entry.isDirectory() ? walk(path) : /\.(?:ts|mts|js|sh)$/.test(entry.name) ? [path] : []
  })
  return ['src', 'test', 'scripts', 'bench', 'examples', 'clients/typescript/src'].flatMap(walk)
}

/** A page of docs/ (its subfolders too), ARCHITECTURE.md or README.md, then `#` and an id. */
const CITED_ANCHOR = /\b(docs\/[\w/-]+\.md|ARCHITECTURE\.md|README\.md)#([\w-]+)/g

test('every docs/<page>.md#anchor the code cites is a heading of that page', async (t) => {
  const broken: string[] = []
  let checked = 0
  for (const file of codeFiles()) {
    const text = readFileSync(join(root, file), 'utf8')
    for (const [ref, page, anchor] of text.matchAll(CITED_ANCHOR)) {
      checked++
      const target = join(root, page!)
      if (!existsSync(target)) broken.push(`${file}: ${ref}: no such file`)
      else if (!anchorsOf(target).has(anchor!)) broken.push(`${file}: ${ref}: no such heading`)
    }
  }
  t.ok(checked > 50, `${checked} references checked`)
  t.same(broken, [], 'no reference to a missing heading')
})
