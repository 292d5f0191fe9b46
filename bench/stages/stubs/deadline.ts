// Stage `deadline`: one signal that never aborts, no timer per call.
import type { Deadline } from '../../../src/upstream/policies/deadline.ts'

const NEVER = new AbortController().signal

export function startDeadline (): Deadline {
  return { at: Number.POSITIVE_INFINITY, signal: NEVER }
}
