import { compileTranscoder, type Transcoder } from '../mapping/transcode/index.ts'
import type { HubOperation } from '../catalogue/types.ts'

/**
 * The fast path of an operation, compiled from its response shape (with the
 * configured list key) and the hub's UTC offset. The transcoding threads
 * (transcode-thread.ts) compile theirs with the same inputs.
 */
export function transcoderOf (op: HubOperation, responseKey: string | undefined, offset: string): Transcoder {
  const shape = op.response.type === 'keyed-list' ? { ...op.response, key: responseKey ?? op.response.key } : op.response
  return compileTranscoder(shape, { offset })
}
