// Transcoding on worker threads (piscina), so that the main thread goes on
// answering other requests while a large answer is rewritten on another core.
//
// Only large answers (256 KiB or more, LARGE_ANSWER_BYTES in decode.ts) go to
// a thread: for a 54 KB list, moving the bytes there and back costs about
// what transcoding them does (measured: no gain, and a worse p99). The body
// is copied once into a buffer of the pool's, which is moved (not copied) to
// the thread and comes back with the answer, to be used for the next body.
import { availableParallelism } from 'node:os'
import { Piscina } from 'piscina'
import type { Config } from '../config/load.ts'
import type { Transcoded } from '../mapping/transcode/index.ts'
import type { OperationMap } from './resolve-operations.ts'
import type { ThreadSetup, TranscodeResult, TranscodeTask } from './transcode-thread.ts'

export interface TranscodePool {
  /**
   * Our answer from a thread, or the body in one buffer where the transcoder
   * gave up on it (for the reference path). Rejects when the thread failed
   * or `signal` aborted the task while it waited.
   */
  run(
    operation: string,
    chunks: readonly Buffer[],
    size: number,
    signal: AbortSignal
  ): Promise<Transcoded | { gaveUp: Buffer }>
  close(): Promise<void>
}

/**
 * Body buffers kept for reuse: at most this many, of at most this size (larger bodies get one each
 * time).
 */
const SPARE_BUFFERS = 8
const SPARE_MAX_BYTES = 4 * 1024 * 1024

/**
 * TRANSCODE_THREADS resolved: `auto` is one thread per core beyond the first, at most 4 (Node
 * counts the host's cores, not a CPU quota).
 */
export function transcodeThreads (
  setting: Config['TRANSCODE_THREADS'],
  cores = availableParallelism()
): number {
  if (setting === 'auto') return Math.max(0, Math.min(4, cores - 1))
  return Number(setting)
}

/** What each thread needs to compile the same transcoders as the main thread. */
export function threadSetup (operations: OperationMap, offset: string): ThreadSetup {
  return {
    offset,
    fastPaths: Object.fromEntries(
      [...operations.values()].flatMap((op) =>
        op.fastPath === undefined ? [] : [[op.id, op.fastPath]]
      )
    )
  }
}

/**
 * The threads' environment: the process's, without NODE_V8_COVERAGE. A
 * thread's coverage cannot be merged with the main thread's (piscina
 * require()s the module, which tsx compiles differently from an import, so
 * the offsets differ and c8 would report wrong lines). The thread's work,
 * transcode-thread.ts, is also tested on the main thread.
 */
function threadEnv (): Record<string, string | undefined> {
  const env = { ...process.env }
  delete env.NODE_V8_COVERAGE
  return env
}

function workerFile (): URL {
  // Beside this module: .mts when the gateway runs from source (tsx), .mjs when built.
  const ext = import.meta.url.endsWith('.ts') ? '.mts' : '.mjs'
  return new URL(`./transcode-worker${ext}`, import.meta.url)
}

export function createTranscodePool (threads: number, setup: ThreadSetup): TranscodePool {
  const pool = new Piscina<TranscodeTask, TranscodeResult>({
    filename: workerFile().href,
    // Started with the gateway and kept: starting one costs far more than an answer, and the first
    // large answer should not pay for it.
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: Number.POSITIVE_INFINITY,
    workerData: setup,
    env: threadEnv()
  })
  const spare: ArrayBuffer[] = []
  let closed = false

  function bodyOf (chunks: readonly Buffer[], size: number): Uint8Array<ArrayBuffer> {
    const i = spare.findIndex(buffer => buffer.byteLength >= size)
    const buffer = i === -1 ? new ArrayBuffer(size) : spare.splice(i, 1)[0] as ArrayBuffer
    const body = new Uint8Array(buffer, 0, size)
    let at = 0
    for (const chunk of chunks) {
      body.set(chunk, at)
      at += chunk.length
    }
    return body
  }

  function keep (buffer: ArrayBuffer): void {
    if (buffer.byteLength > SPARE_MAX_BYTES) return
    if (spare.length === SPARE_BUFFERS) spare.shift()
    spare.push(buffer)
  }

  return {
    async run (operation, chunks, size, signal) {
      // piscina would start a new thread, which nothing would stop.
      if (closed) throw new Error('the transcoding threads are closed')
      const body = bodyOf(chunks, size)
      const result = await pool.run({ operation, body }, { transferList: [body.buffer], signal })
      if (result.framed === undefined) {
        // Not kept: the reference path reads it.
        return {
          gaveUp: Buffer.from(result.body.buffer, result.body.byteOffset, result.body.byteLength)
        }
      }
      keep(result.body.buffer)
      const framed = Buffer.from(
        result.framed.buffer,
        result.framed.byteOffset,
        result.framed.byteLength
      )
      return {
        framed,
        json: framed.subarray(result.jsonStart, result.jsonStart + result.jsonLength),
        count: result.count,
        drift: result.drift
      }
    },
    async close () {
      closed = true
      await pool.close({ force: true })
    }
  }
}
