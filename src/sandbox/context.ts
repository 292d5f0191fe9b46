import type { SandboxConfig } from './config.ts'
import type { Dataset } from './data.ts'

/**
 * What a parameter means, whatever the hub calls it: the names a hub
 * profile's `params` uses (docs/reference/profile.md), and the keys of
 * `OperationContext.values` and `RecordedRequest.values`.
 */
export type ParamKind = 'npwp' | 'blNo' | 'blDate' | 'pibNo' | 'containerNo' | 'sp2Id' | 'bookingRequestId'

/** The request body as read: absent, JSON, or text that is not JSON. */
export type RequestBody =
  | { kind: 'none' }
  | { kind: 'json', value: unknown }
  | { kind: 'invalid', text: string }

/** What an operation handler gets: parameters already present and well-formed. */
export interface OperationContext {
  /** By the hub's names. */
  params: Record<string, string>
  /** The same by what they mean; a date in either form a hub takes (`day()` reads both). */
  values: Partial<Record<ParamKind, string>>
  body: RequestBody
  dataset: Dataset
  config: SandboxConfig
}
