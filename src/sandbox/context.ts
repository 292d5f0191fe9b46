import type { SandboxConfig } from './config.ts'
import type { Dataset } from './data.ts'

/** The request body as read: absent, JSON, or text that is not JSON. */
export type RequestBody =
  | { kind: 'none' }
  | { kind: 'json', value: unknown }
  | { kind: 'invalid', text: string }

/** What an operation handler gets: parameters already present and well-formed. */
export interface OperationContext {
  params: Record<string, string>
  body: RequestBody
  dataset: Dataset
  config: SandboxConfig
}
