import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

export const CLIENT_PACKAGE_DIR = fileURLToPath(
  new URL('../../clients/typescript/', import.meta.url)
)

/**
 * Builds the client as `npm run build:client` does (its tsconfig.build.json),
 * into `outDir`, so that a test serves what the package ships without
 * touching clients/typescript/dist, which another test may be writing.
 */
export function buildClient (outDir: string): void {
  const { config } = ts.readConfigFile(
    join(CLIENT_PACKAGE_DIR, 'tsconfig.build.json'),
    ts.sys.readFile
  ) as { config: unknown }
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, CLIENT_PACKAGE_DIR, { outDir })
  const program = ts.createProgram(parsed.fileNames, parsed.options)
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...program.emit().diagnostics]
  if (diagnostics.length > 0) {
    throw new Error(
      ts.formatDiagnostics(diagnostics, {
        getCanonicalFileName: (f) => f,
        getCurrentDirectory: () => CLIENT_PACKAGE_DIR,
        getNewLine: () => '\n'
      })
    )
  }
}
