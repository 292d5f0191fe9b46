import { DRIFT } from '../mapping/drift.ts'
import { ShapeError } from '../mapping/shape-error.ts'
import type { ResolvedOperation } from './resolve-operations.ts'

/**
 * What the reference path noted beyond the item's fields: a list found elsewhere than documented.
 */
export type NoteDrift = (bit: number, details?: Record<string, unknown>) => void

type Data = Record<string, unknown> | Array<Record<string, unknown>>

function isObject (value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** The only array-valued member of an answer, or undefined when there is none or more than one. */
function onlyArray (parsed: Record<string, unknown>): [string, unknown[]] | undefined {
  let found: [string, unknown[]] | undefined
  for (const key of Object.keys(parsed)) {
    const value = parsed[key]
    if (!Array.isArray(value)) continue
    if (found !== undefined) return undefined
    found = [key, value]
  }
  return found
}

/**
 * The list of a list operation, where the profile in force puts it: under
 * its key, the answer itself, or the only array. The hub's keys drift: when
 * the expected list is missing but exactly one array-valued member is
 * present, it is unambiguous: it is used, and the drift noted.
 */
function listOf (op: ResolvedOperation, parsed: unknown, note: NoteDrift): unknown[] {
  const { answer, documentedKey } = op
  const expected =
    answer.kind === 'key'
      ? answer.key
      : answer.kind === 'only-array'
        ? '(the only array)'
        : '(a bare array)'
  if (answer.kind === 'key') {
    // A keyed list must come in an object (today's rule for the documented keys).
    if (!isObject(parsed)) throw new ShapeError(op.id, `an object with "${answer.key}"`)
    const list = parsed[answer.key]
    if (list !== undefined) {
      if (!Array.isArray(list)) throw new ShapeError(op.id, `an array under "${answer.key}"`)
      // Where the profile says: no tolerance applied, so none counted (another key than the
      // catalogue's is the profile's to name, not drift on every answer).
      return list
    }
  } else if (Array.isArray(parsed)) {
    if (documentedKey !== undefined) {
      note(DRIFT.answerKey, {
        expectedKey: documentedKey,
        actualKey: '(a ' +
      'bare array)'
      })
    }
    return parsed
  }
  const only = isObject(parsed) ? onlyArray(parsed) : undefined
  if (only === undefined) throw new ShapeError(op.id, `a list under ${expected}`)
  const [actualKey, list] = only
  if (answer.kind === 'key') note(DRIFT.answerKey, { expectedKey: answer.key, actualKey })
  else if (actualKey !== documentedKey) {
    note(DRIFT.answerKey, { expectedKey: documentedKey ?? expected, actualKey })
  }
  return list
}

function normalizeList (op: ResolvedOperation, list: unknown[]): Array<Record<string, unknown>> {
  const out = new Array(list.length)
  for (let i = 0; i < list.length; i++) out[i] = op.normalize(list[i], `${op.id}[${i}]`)
  return out
}

/** A record operation's record: the answer itself, or under the profile's key. */
function recordOf (op: ResolvedOperation, parsed: unknown): unknown {
  const { answer } = op
  if (answer.kind !== 'key') return parsed
  if (!isObject(parsed) || parsed[answer.key] === undefined) {
    throw new ShapeError(op.id, 'an ' +
    `object with "${answer.key}"`)
  }
  return parsed[answer.key]
}

/**
 * The reference path from a parsed hub answer to our data: the list or
 * record where the profile in force puts it, each record through the
 * operation's compiled normalizer. It is what the byte transcoder
 * (mapping/transcode/) must agree with, and what reads the answers the
 * transcoder gives up on or does not read. Throws ShapeError naming the path.
 */
export function extract (op: ResolvedOperation, parsed: unknown, note: NoteDrift): Data {
  switch (op.response.type) {
    case 'keyed-list':
    case 'list':
      return normalizeList(op, listOf(op, parsed, note))
    case 'records': {
      // One record or several: an array, a list where the profile says, or the one record.
      const value = op.answer.kind === 'key' ? recordOf(op, parsed) : parsed
      if (Array.isArray(value)) return normalizeList(op, value)
      const only = op.answer.kind === 'only-array' && isObject(value) ? onlyArray(value) : undefined
      return only === undefined ? [op.normalize(value, op.id)] : normalizeList(op, only[1])
    }
    case 'record':
      return op.normalize(recordOf(op, parsed), op.id)
  }
}

/**
 * Whether a parsed answer lacks the data it should hold: no list where the
 * profile says for a list operation; for a record, none of the fields that
 * make its identity (a record without identity fields, as the writes'
 * answers, is never said to lack them).
 */
export function lacksData (op: ResolvedOperation, parsed: unknown): boolean {
  switch (op.response.type) {
    case 'keyed-list':
    case 'list':
      try {
        listOf(op, parsed, () => {})
        return false
      } catch {
        return true
      }
    case 'records':
    case 'record': {
      const required = op.response.item.required ?? []
      if (required.length === 0) return false
      let value: unknown
      try {
        value = op.answer.kind === 'key' ? recordOf(op, parsed) : parsed
      } catch {
        return true
      }
      if (Array.isArray(value)) return false
      if (
        op.response.type === 'records' &&
        op.answer.kind === 'only-array' &&
        isObject(value) &&
        onlyArray(value) !== undefined
      ) { return false }
      return !isObject(value) || !required.some(name => value[name] !== undefined)
    }
  }
}
