import { LogController, type FastifyReply, type FastifyRequest } from 'fastify'

/**
 * Fastify's request logging, one line a request at `info`, written as it
 * ends (as pino-http does): `request completed` (`request errored` when the
 * response failed, at `error`) with the request (`req`: method, URL with its
 * query redacted, host, peer), the status (`res`) and `responseTime` in ms.
 * Fastify's own `incoming request` line is written at `debug` only, where a
 * request that never ends is looked for: the second line cost 50-60 µs of
 * CPU a lookup at `info` (docs/performance.md#in-the-container).
 */
export class AccessLog extends LogController {
  override incomingRequest (request: FastifyRequest, _reply?: FastifyReply): void {
    if (this.isLogDisabled(request)) return
    request.log.debug({ req: request }, 'incoming request')
  }

  override requestCompleted (
    error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply
  ): void {
    if (this.isLogDisabled(request)) return
    const line = { req: request, res: reply, responseTime: reply.elapsedTime }
    if (error) reply.log.error({ ...line, err: error }, 'request errored')
    else reply.log.info(line, 'request completed')
  }
}
