import type { FastifyBaseLogger } from 'fastify'
import { ShapeError } from '../mapping/shape-error.ts'
import type { ResolvedOperation } from './resolve-operations.ts'

/**
 * The reference path from a parsed hub answer to our data: the list or
 * record where interface.md puts it (or, on key drift, where it unambiguously
 * is), each record through the operation's compiled normalizer. It is what
 * the byte transcoder (mapping/transcode/) must agree with, and what reads
 * the answers the transcoder gives up on. Throws ShapeError naming the path.
 */
export function extract (op: ResolvedOperation, parsed: unknown, log: Pick<FastifyBaseLogger, 'warn'>): Record<string, unknown> | Array<Record<string, unknown>> {
  const { response } = op
  switch (response.type) {
    case 'keyed-list': {
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new ShapeError(op.id, `an object with "${op.responseKey}"`)
      const list = (parsed as Record<string, unknown>)[op.responseKey as string]
      if (list === undefined) return normalizeList(op, soleArray(op, parsed, log))
      if (!Array.isArray(list)) throw new ShapeError(op.id, `an array under "${op.responseKey}"`)
      return normalizeList(op, list)
    }
    case 'list':
      return normalizeList(op, Array.isArray(parsed) ? parsed : soleArray(op, parsed, log))
    case 'records':
      return Array.isArray(parsed) ? normalizeList(op, parsed) : [op.normalize(parsed, op.id)]
    case 'record':
      return op.normalize(parsed, op.id)
  }
}

/**
 * contract.md 3: the hub's keys drift. When the expected list is missing but
 * exactly one array-valued key is present, it is unambiguous: use it and log.
 */
function soleArray (op: ResolvedOperation, parsed: unknown, log: Pick<FastifyBaseLogger, 'warn'>): unknown[] {
  const expected = op.responseKey ?? '(a bare array)'
  if (parsed === null || typeof parsed !== 'object') throw new ShapeError(op.id, `a list under ${expected}`)
  const record = parsed as Record<string, unknown>
  const arrays = Object.keys(record).filter(key => Array.isArray(record[key]))
  if (arrays.length !== 1) throw new ShapeError(op.id, `a list under ${expected}`)
  const actualKey = arrays[0] as string
  log.warn({ operation: op.id, expectedKey: expected, actualKey }, 'upstream response key drift')
  return record[actualKey] as unknown[]
}

function normalizeList (op: ResolvedOperation, list: unknown[]): Array<Record<string, unknown>> {
  const out = new Array(list.length)
  for (let i = 0; i < list.length; i++) out[i] = op.normalize(list[i], `${op.id}[${i}]`)
  return out
}
