// The lookup envelope as bytes, apart from its schemas (envelope.ts) so that
// the transcoding threads load no TypeBox.

/** A lookup's `meta`, in the order the envelope writes it. */
export interface LookupMeta {
  count?: number
  cached: boolean
  stale?: boolean
}

/**
 * The lookup envelope as bytes around an answer's JSON, which is already
 * encoded: `{"data":` + the JSON + `,"meta":{...}}`. Written once per answer
 * (see CallResult.envelope), never re-serialized per response.
 */
export const ENVELOPE_HEAD = Buffer.from('{"data":')

export function envelopeTail ({ count, cached, stale }: LookupMeta): Buffer {
  // Written out rather than JSON.stringify'd: it runs once per hub answer, and its parts are a
  // number and two booleans.
  const countMember = count === undefined ? '' : `"count":${count},`
  const staleMember = stale === true ? ',"stale":true' : ''
  return Buffer.from(`,"meta":{${countMember}"cached":${String(cached)}${staleMember}}}`, 'latin1')
}

/**
 * The envelope of a fresh answer (`cached: false`), as the transcoder writes it around our JSON.
 */
export const FRESH_FRAME = {
  head: ENVELOPE_HEAD,
  tail: (count: number | undefined): Buffer => envelopeTail({ count, cached: false })
}

/**
 * The lookup response around `json` in one buffer of its exact size, and `json`'s place in it (a
 * view).
 */
export function envelopeAround (
  json: Uint8Array,
  meta: LookupMeta
): { body: Buffer; json: Buffer } {
  const body = Buffer.concat([ENVELOPE_HEAD, json, envelopeTail(meta)])
  return { body, json: body.subarray(ENVELOPE_HEAD.length, ENVELOPE_HEAD.length + json.length) }
}
