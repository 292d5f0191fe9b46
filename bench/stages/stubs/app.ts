// Stage `request-id-logger`: a constant request id and no child logger per
// request (the server's logger itself); the rest of app.js as it is.
import type { FastifyServerOptions } from 'fastify'
import { originalOf } from '../original.ts'

const original = await import(originalOf('app.js')) as typeof import('../../../src/app.ts')

export const { VERSION, REQUEST_ID_LOG_LABEL, requestIdOf, redactPaths, loggerOptions, buildApp } =
  original
export default original.default

export function serverOptions (
  ...args: Parameters<typeof original.serverOptions>
): FastifyServerOptions {
  return {
    ...original.serverOptions(...args),
    genReqId: () => 'bench',
    childLoggerFactory: (logger) => logger
  }
}
