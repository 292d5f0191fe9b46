// Stage `deadline`: a deadline that never passes in a run (the exchange's timer, in transport.ts, stays), one signal that never aborts.
import type { Deadline } from '../../../src/upstream/policies/deadline.ts'

const NEVER = new AbortController().signal

export function startDeadline (): Deadline {
  // Within setTimeout's range (2^31 - 1 ms): the exchange's timer is set to it.
  return { at: Date.now() + 2_000_000_000, signal: NEVER }
}
