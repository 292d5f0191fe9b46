// Stage `headers` (with cache-headers.ts): no helmet headers; the JSON body parser kept.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { originalOf } from '../original.ts'

const { parseJsonBody } = (await import(
  originalOf('plugins/json-body.js')
)) as typeof import('../../../src/plugins/json-body.ts')

export default fp(async (app: FastifyInstance) => {
  app.removeContentTypeParser('text/plain')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parseJsonBody)
}, { name: 'hardening' })
