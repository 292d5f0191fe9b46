import type { HubOperation } from '../catalogue/types.ts'
import {
  compileTranscoder,
  type Transcoder,
  type TranscodeShape
} from '../mapping/transcode/index.ts'

/**
 * Where an operation's data is in a 2xx answer: the answer itself, under a member, or the only
 * array.
 */
export type AnswerMode =
  | { kind: 'bare' }
  | { kind: 'key', key: string }
  | { kind: 'only-array' }

/**
 * What the fast path of an operation is compiled from; the transcoding threads
 * (transcode-thread.ts) get the same.
 */
export interface FastPathSpec {
  answer: AnswerMode
  /** The hub sends days that have a time of day alone (a profile's dateAnswered). */
  dayOnly: boolean
}

/**
 * The transcoder's shape of an operation's answer, or undefined where the
 * byte transcoder does not read that shape (a record under a member, the
 * only array of an object): the reference path reads those.
 */
export function fastShape (op: HubOperation, answer: AnswerMode): TranscodeShape | undefined {
  const { response } = op
  if (answer.kind === 'key') {
    return response.type === 'keyed-list' || response.type === 'list'
      ? { type: 'keyed-list', key: answer.key, item: response.item }
      : undefined
  }
  if (answer.kind === 'only-array') return undefined
  return response.type === 'keyed-list' ? undefined : response
}

/**
 * The fast path of an operation, compiled from its answer's shape and the
 * hub's UTC offset; undefined where the reference path reads every answer.
 */
export function transcoderOf (
  op: HubOperation,
  spec: FastPathSpec,
  offset: string
): Transcoder | undefined {
  const shape = fastShape(op, spec.answer)
  return shape === undefined
    ? undefined
    : compileTranscoder(shape, { offset, dayOnly: spec.dayOnly })
}
