import type { Answer } from './answer.ts'
import type { ReportForm } from './fault-answers.ts'
import type { ParamKind } from './context.ts'
import type { Operation, Shape } from './operations.ts'

// How a hub addresses, authenticates and words its operations: the seam
// between what the sandbox's operations do (handlers, faults) and the form a
// hub gives them. Two models: the default (default-model.ts, the hub as the
// sandbox has always read it) and a hub profile's (profile-model.ts).

/** A request matched to an operation. */
export interface Routed {
  operation: Operation
  /** The parameters found, by the hub's names. */
  params: Record<string, string>
  /** The same, by what they mean. */
  values: Partial<Record<ParamKind, string>>
  /** The path segments that carried parameters (magic values are looked for in them). */
  segments: string[]
}

export type Headers = Record<string, string | string[] | undefined>

export interface HubModel {
  /** The operation whose address the raw path (query string removed) is, whatever the method. */
  route (path: string, query: URLSearchParams): Routed | undefined
  /** An error answer when the credentials the operation needs are missing or wrong. */
  authenticate (operation: Operation, headers: Headers): Answer | undefined
  /** An error answer when a parameter is missing or malformed. */
  validate (routed: Routed): Answer | undefined
  /** The operation's answer in this hub's form (its key, dates and values). */
  present (operation: Operation, answer: Answer): Answer
  /** The shape of the operation's answers in this hub's form, which the faults imitate or break. */
  shape (operation: Operation): Shape
  /** The member names of the operation's 200 answers that report a failure. */
  report (operation: Operation): ReportForm
  /**
   * Any answer about to be sent for a hub address (of the operation, or unknown): its errors in
   * this hub's shape.
   */
  finish (answer: Answer, operation?: Operation): Answer
}
