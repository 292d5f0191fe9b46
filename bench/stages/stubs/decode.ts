// Stage `decode`: the first answer of each operation and size is decoded as
// the gateway does; later ones are a copy of it (one allocation and memcpy
// of the envelope, which the transcoder makes too).
import { originalOf } from '../original.ts'
import type { Decoder, DecoderOptions } from '../../../src/upstream/decode.ts'
import type { Fetched } from '../../../src/upstream/answer.ts'

const original = await import(originalOf('upstream/decode.js')) as typeof import('../../../src/upstream/decode.ts')
export const { LARGE_ANSWER_BYTES } = original

export function createDecoder (options: DecoderOptions): Decoder {
  const decoder = original.createDecoder(options)
  const first = new Map<string, Fetched>()
  return {
    decode (op, chunks, size, statusCode, signal, log, secrets) {
      const key = `${op.id} ${size}`
      const known = first.get(key)
      if (known === undefined) {
        const fetched = decoder.decode(op, chunks, size, statusCode, signal, log, secrets)
        if (fetched instanceof Promise) return fetched.then((f) => { first.set(key, f); return f })
        first.set(key, fetched)
        return fetched
      }
      const body = Buffer.from(known.body)
      const at = known.json.byteOffset - known.body.byteOffset
      return { json: body.subarray(at, at + known.json.length), count: known.count, upstreamStatus: statusCode, body, cached: false }
    },
    close: () => decoder.close()
  }
}
