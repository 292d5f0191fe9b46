import { Writable } from 'node:stream'
import pino from 'pino'
import { test } from 'tap'
import { RequestLogger } from '../../src/logging/request-logger.ts'

function capture (level: string): { logger: pino.Logger, lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({
    write (chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>)
      done()
    }
  })
  return { logger: pino({ level, redact: ['secret'] }, stream), lines }
}

test('a request logger writes pino\'s lines with its bindings, at the levels in force', (t) => {
  const { logger, lines } = capture('warn')
  const log = new RequestLogger(logger, { requestId: 'r-1' })
  log.info('not at warn')
  log.debug({ a: 1 }, 'nor this')
  t.same(lines, [], 'nothing below the level')
  log.warn({ secret: 'k', n: 2 }, 'kept')
  log.error('also %s', 'kept')
  t.match(lines, [
    { level: 40, requestId: 'r-1', n: 2, secret: '[Redacted]', msg: 'kept' },
    { level: 50, requestId: 'r-1', msg: 'also kept' }
  ])
  t.equal(log.level, 'warn')
  t.end()
})

test('a request logger\'s child and level are pino\'s, bound to the request', (t) => {
  const { logger, lines } = capture('info')
  const log = new RequestLogger(logger, { requestId: 'r-2' })
  log.child({ traceId: 't' }).info('traced')
  log.level = 'error'
  log.warn('now below the level')
  log.error('shown')
  t.match(lines, [
    { requestId: 'r-2', traceId: 't', msg: 'traced' },
    { requestId: 'r-2', msg: 'shown' }
  ])
  t.equal(lines.length, 2)
  t.equal(logger.level, 'info', 'the server\'s logger keeps its level')
  t.end()
})
