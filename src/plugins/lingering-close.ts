import type { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'

/**
 * The rest of a request body the gateway answered before reading it all
 * (413 past the body limit, 415, and any refusal that comes before the body
 * is read: 401, 403, 404, 405, 429, 503), read and thrown away after the
 * answer instead of being left on the socket.
 *
 * A socket closed with unread bytes in it makes the kernel send a TCP reset,
 * and the reset makes the peer drop what it received but had not read yet:
 * the answer. Node's fetch lost a 413 so four times in five on one keep-alive
 * connection (more often with a chunked body), directly and through HAProxy.
 * Servers avoid it with a "lingering close" (Apache's lingering_close, nginx's
 * lingering_close, Go's net/http), which RFC 9112 9.6 describes: answer,
 * close the own side first, read and discard until the peer closes its side,
 * then close. Here:
 *
 * - a body of at most KEEP_BYTES by its `content-length` keeps the
 *   connection: the rest is read and dropped, and the connection serves the
 *   next request, as after any other answer; if the rest takes more than
 *   KEEP_MS, the connection is closed as below;
 * - a longer body, or one of unknown length (chunked), or any while the
 *   gateway is closing: the answer says `connection: close`, the gateway ends
 *   its side after it (FIN) and reads and discards until the caller ends
 *   its own, then closes; at most LINGER_BYTES more or LINGER_MS, whichever
 *   comes first, then the connection ends anyway (a caller still sending then
 *   gets a reset, but long after its answer).
 *
 * Neither Node nor Fastify has this: Node reads an unread body to its end
 * with no bound at all when it keeps the connection, and after
 * `connection: close` (which Fastify sets on every body error) destroys the
 * socket as soon as the answer is flushed, which is the reset. Hence this
 * plugin.
 */

/**
 * Most of a refused body read for the sake of the connection (Go's net/http reads up to 256 KiB the
 * same way).
 */
export const KEEP_BYTES = 256 * 1024
/** Longest wait for that rest to arrive. */
export const KEEP_MS = 1000
/** Most read and discarded after the gateway's half-close before the connection ends. */
export const LINGER_BYTES = 16 * 1024 * 1024
/**
 * Longest wait for the caller to end its side after the gateway's half-close (Apache waits 2 s for
 * each read).
 */
export const LINGER_MS = 2000

/**
 * Sockets discarding a refused body. A caller that stops sending and closes
 * (Node's fetch does, as soon as it has its answer) leaves Node's parser
 * with a body cut short: no request to answer (error-handler.ts
 * clientErrorHandler).
 */
const discarding = new WeakSet<Socket>()

export function isDiscarding (socket: Socket): boolean {
  return discarding.has(socket)
}

/** A request body's length by its `content-length`; undefined when it has none (chunked). */
function declaredLength (req: IncomingMessage): number | undefined {
  const length = Number(req.headers['content-length'])
  return req.headers['content-length'] !== undefined && Number.isSafeInteger(length) && length >= 0
    ? length
    : undefined
}

function hasBody (req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || (declaredLength(req) ?? 0) > 0
}

/**
 * A request whose body is unread, answered with `res`: from the answer on,
 * the rest is read and dropped, and the connection kept or closed in stages
 * (see above). `close`: the answer says `connection: close`. Called before
 * the answer is sent: reading starts at once, since Node dumps a body that
 * nobody reads when the answer is finished (IncomingMessage#_dump), which
 * drops every `data` listener and emits nothing of what it goes on reading,
 * so that nothing can count it (a caller that kept sending had gigabytes
 * read before LINGER_MS).
 */
export function discardRest (req: IncomingMessage, res: ServerResponse, close: boolean): void {
  const socket = req.socket
  if (req.complete || socket.destroyed) return
  discarding.add(socket)
  let answered = false
  // What the connection had read when the current bound began: the bytes
  // themselves are counted (framing included), not the chunks seen.
  let from = 0
  let budget = KEEP_BYTES
  let lingering = false
  let timer: NodeJS.Timeout | undefined
  function stop (): void {
    clearTimeout(timer)
    req.off('data', count)
    req.off('end', ended)
    res.off('finish', start)
    socket.off('close', stop)
  }
  function destroy (): void {
    stop()
    socket.destroy()
  }
  function ended (): void {
    // Before the answer is out, the connection is Node's to keep or close.
    if (!answered) return
    if (lingering) {
      // Nothing left unread: closing now sends no reset.
      destroy()
      return
    }
    // The whole body read within the bounds: the connection serves the next request.
    stop()
    discarding.delete(socket)
  }
  function linger (): void {
    clearTimeout(timer)
    lingering = true
    from = socket.bytesRead
    budget = LINGER_BYTES
    // After `connection: close` Node has ended the socket (the FIN follows the
    // answer) and destroys it once that is flushed (net.Socket#destroySoon):
    // with the body still arriving, the reset. The destroy is left to the bounds.
    socket.removeListener('finish', socket.destroy)
    socket.end()
    timer = setTimeout(destroy, LINGER_MS).unref()
  }
  function count (): void {
    if (!answered || socket.bytesRead - from <= budget) return
    if (lingering) destroy()
    else linger()
  }
  function start (): void {
    answered = true
    if (req.complete) {
      ended()
      return
    }
    from = socket.bytesRead
    if (close) linger()
    else timer = setTimeout(linger, KEEP_MS).unref()
  }
  // Node's server goes on reading a body nobody reads (or that Fastify stopped reading):
  // read and counted here.
  req.on('data', count)
  req.on('end', ended)
  socket.on('close', stop)
  res.once('finish', start)
  req.resume()
}

async function lingeringClose (app: FastifyInstance) {
  // After lifecycle's own onSend hook, which asks for `connection: close` while the app closes.
  app.addHook('onSend', (request, reply, payload, done) => {
    const req = request.raw
    // A real connection only: `app.inject` has none to keep or close.
    if (!req.complete && req.socket instanceof Socket && hasBody(req)) {
      // Whether the connection ends is decided here, not by Fastify's `connection: close` after a
      // body error.
      const length = declaredLength(req)
      const close = app.closing || length === undefined || length > KEEP_BYTES
      if (close) reply.header('connection', 'close')
      else reply.removeHeader('connection')
      discardRest(req, reply.raw, close)
    }
    done(null, payload)
  })
}

export default fp(lingeringClose, { name: 'lingering-close', dependencies: ['lifecycle'] })
