import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import ts from 'typescript'

/**
 * The client's type tests (clients/typescript/type-tests) with the
 * client's own compiler options: they compile as written, and without their
 * `@ts-expect-error` lines each line that followed one is an error, and no
 * other line is. So every wrong call fails on its own line, not on a
 * neighbour's, and a regression to looser types (say, openapi-fetch's own
 * method types, which let a body field too many pass) fails here.
 */
const dir = fileURLToPath(new URL('../../clients/typescript/', import.meta.url))
const { config } = ts.readConfigFile(join(dir, 'tsconfig.json'), ts.sys.readFile) as {
  config: unknown
}
const parsed = ts.parseJsonConfigFileContent(config, ts.sys, dir)
const typeTests = parsed.fileNames.filter(file => file.includes('/type-tests/'))

function compile (replaced: ReadonlyMap<string, string>, oldProgram?: ts.Program): ts.Program {
  const host = ts.createCompilerHost(parsed.options)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (fileName, languageVersion, ...rest) => {
    const text = replaced.get(resolve(fileName))
    return text === undefined
      ? getSourceFile(fileName, languageVersion, ...rest)
      : ts.createSourceFile(fileName, text, languageVersion)
  }
  return ts.createProgram({
    rootNames: parsed.fileNames,
    options: parsed.options,
    host,
    ...(oldProgram === undefined ? {} : { oldProgram })
  })
}

function describe (diagnostic: ts.Diagnostic): string {
  const where =
    diagnostic.file === undefined || diagnostic.start === undefined
      ? ''
      : `line ${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1}: `
  return where + ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')
}

t.ok(typeTests.length > 0, 'type tests found')
const program = compile(new Map())

t.test('the type tests compile as written', async (t) => {
  t.same(ts.getPreEmitDiagnostics(program).map(describe), [])
})

for (const file of typeTests) {
  t.test(
    `${file.slice(dir.length)}: each line after @ts-expect-error fails to compile, and only those`,
    async (t) => {
      const lines = readFileSync(file, 'utf8').split('\n')
      const expected = lines.flatMap((line, i) =>
        /^\s*\/\/ @ts-expect-error\b/.test(line) ? [i + 2] : []
      )
      t.ok(expected.length >= 10, `${expected.length} expected errors`)
      const stripped = lines
        .map((line) => (/^\s*\/\/ @ts-expect-error\b/.test(line) ? '' : line))
        .join('\n')
      const diagnostics = ts.getPreEmitDiagnostics(
        compile(new Map([[resolve(file), stripped]]), program)
      )
      const byLine = new Map<number, string[]>()
      for (const diagnostic of diagnostics) {
        t.equal(
          diagnostic.file?.fileName === undefined ? undefined : resolve(diagnostic.file.fileName),
          resolve(file),
          `only in the type test: ${describe(diagnostic)}`
        )
        if (diagnostic.file === undefined || diagnostic.start === undefined) continue
        const line = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1
        byLine.set(line, [...(byLine.get(line) ?? []), describe(diagnostic)])
      }
      for (const line of expected) {
        t.ok(byLine.has(line), `line ${line} fails: ` +
        `${lines[line - 2]?.trim()}`)
      }
      t.same(
        [...byLine.keys()]
          .filter((line) => !expected.includes(line))
          .map((line) => byLine.get(line)),
        [],
        'no error elsewhere'
      )
    }
  )
}
