// The work of one transcoding thread of the pool in transcode-pool.ts (the
// thread itself is transcode-worker.mts). It compiles the same transcoders as
// the main thread, from the same inputs, and runs them on answers moved
// there; the result is moved back, with the body's buffer for the next
// answer. Nothing is copied across.
import { move, transferableSymbol, valueSymbol } from 'piscina'
import type { Transcoder } from '../mapping/transcode/index.ts'
import { FRESH_FRAME } from '../schemas/envelope-bytes.ts'
import { OPERATIONS } from '../catalogue/operations.ts'
import type { HubOperation } from '../catalogue/types.ts'
import { transcoderOf, type FastPathSpec } from './operation-transcoder.ts'

/** What the main thread tells each thread at start: the inputs of transcoderOf. */
export interface ThreadSetup {
  offset: string
  /**
   * Each operation's fast path as the profile in force has it; the operations without one are not
   * sent to a thread.
   */
  fastPaths: Record<string, FastPathSpec>
}

export interface TranscodeTask {
  operation: string
  /** The hub's body; its buffer is moved here, and back with the result for the next body. */
  body: Uint8Array<ArrayBuffer>
}

/**
 * The fresh envelope (`cached: false`) with our JSON inside and where the
 * JSON is in it; no `framed` where the transcoder gave up (the main thread's
 * reference path then reads `body`).
 */
export interface TranscodeResult {
  body: Uint8Array<ArrayBuffer>
  framed?: Uint8Array<ArrayBuffer>
  jsonStart: number
  jsonLength: number
  count: number | undefined
  /** What the answer needed tolerated (DRIFT bits). */
  drift: number
}

/**
 * A result whose buffers go back with it rather than being copied (piscina's Transferable
 * interface).
 */
function moved (result: TranscodeResult): unknown {
  const buffers =
    result.framed === undefined ? [result.body.buffer] : [result.body.buffer, result.framed.buffer]
  return move({
    get [transferableSymbol] () { return buffers },
    get [valueSymbol] () { return result }
  } as unknown as ArrayBuffer)
}

/** A thread's task handler: our answer, or the body back where the transcoder gives up. */
export function threadHandler (setup: ThreadSetup): (task: TranscodeTask) => unknown {
  const transcoders = new Map<string, Transcoder>()
  for (const op of OPERATIONS as readonly HubOperation[]) {
    const spec = setup.fastPaths[op.id]
    const transcoder = spec === undefined ? undefined : transcoderOf(op, spec, setup.offset)
    if (transcoder !== undefined) transcoders.set(op.id, transcoder)
  }
  return ({ operation, body }) => transcode(transcoders, operation, body)
}

function transcode (
  transcoders: ReadonlyMap<string, Transcoder>,
  operation: string,
  body: Uint8Array<ArrayBuffer>
): unknown {
  const transcoder = transcoders.get(operation)
  if (transcoder === undefined) throw new Error(`unknown operation ${operation}`)
  const out = transcoder(Buffer.from(body.buffer, body.byteOffset, body.byteLength), FRESH_FRAME)
  if (out === undefined) {
    return moved({ body, jsonStart: 0, jsonLength: 0, count: undefined, drift: 0 })
  }
  // Moving a buffer moves all of its memory: it must be the answer's alone (small ones share Node's
  // pool).
  const { buffer, byteOffset, byteLength } = out.framed
  const framed =
    buffer instanceof ArrayBuffer && byteOffset === 0 && byteLength === buffer.byteLength
      ? new Uint8Array(buffer)
      : new Uint8Array(out.framed)
  return moved({
    body,
    framed,
    jsonStart: out.json.byteOffset - out.framed.byteOffset,
    jsonLength: out.json.length,
    count: out.count,
    drift: out.drift
  })
}
