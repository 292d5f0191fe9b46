import { buildApp, type GatewayConfig } from './app.ts'
import { loadConfig } from './config/load.ts'
import { sandboxEnv } from './config/sandbox-env.ts'
import { renderGlossary } from './mapping/glossary.ts'
import { SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_PLATFORM_ID, startSandbox } from './sandbox/index.ts'

/**
 * The committed artefacts (`openapi/openapi.json`, `docs/glossary.md`) and
 * how to produce them. Shared by `scripts/generate-openapi.ts`, which writes
 * them, and the test that fails when the committed copies drift.
 */

/** Where the artefacts live, relative to the repository root. */
export const OPENAPI_PATH = 'openapi/openapi.json'
export const GLOSSARY_PATH = 'docs/glossary.md'

export interface GenerateOptions {
  /** Environment variables, as the gateway would read them (merged over the sandbox defaults). */
  env?: Record<string, string>
}

/**
 * Builds the gateway in front of a throwaway sandbox and returns its OpenAPI
 * document as plain JSON (what `GET /openapi.json` serves). Nothing in it depends on
 * the sandbox's address or on credentials: the same code gives the same
 * document whatever port the sandbox got.
 */
export async function generateDocument (options: GenerateOptions = {}): Promise<Record<string, unknown>> {
  const env = options.env ?? {}
  // The sandbox accepts whatever credentials the gateway is configured with.
  const sandbox = await startSandbox({
    apiKey: env.UPSTREAM_API_KEY ?? SANDBOX_API_KEY,
    accessToken: env.UPSTREAM_ACCESS_TOKEN ?? SANDBOX_ACCESS_TOKEN,
    platformId: env.PLATFORM_ID ?? SANDBOX_PLATFORM_ID
  })
  try {
    const config = loadConfig({
      ...sandboxEnv(sandbox.url),
      LOG_LEVEL: 'silent',
      ...env
    }) as GatewayConfig
    // It does front a sandbox; the document is the same with or without CLIENTS_FILE.
    const app = await buildApp({ config, sandbox: true }, false)
    try {
      // Through JSON, as it is served and committed: schema objects carry non-JSON (symbol) keys.
      return JSON.parse(JSON.stringify(app.swagger())) as Record<string, unknown>
    } finally {
      await app.close()
    }
  } finally {
    await sandbox.close()
  }
}

/** The committed text of a document: 2-space JSON in the generator's (deterministic) key order, with a trailing newline. */
export function renderDocument (doc: unknown): string {
  return JSON.stringify(doc, null, 2) + '\n'
}

/** Both artefacts, keyed by their path from the repository root. */
export async function generateArtefacts (options: GenerateOptions = {}): Promise<Record<string, string>> {
  return {
    [OPENAPI_PATH]: renderDocument(await generateDocument(options)),
    [GLOSSARY_PATH]: renderGlossary()
  }
}
