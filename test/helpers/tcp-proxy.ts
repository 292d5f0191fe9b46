import { connect, createServer, type Socket } from 'node:net'
import { Transform } from 'node:stream'

/** The subset of a tap `Test` the helper uses. */
interface TestLike { teardown (fn: () => unknown): void }

export interface TcpProxy {
  readonly port: number
  /**
   * Drops every connection through it at once, both sides, as a network
   * failure would (no close handshake); the next ones relay replies again.
   */
  cut (): void
  /**
   * From now on a new connection is accepted but not relayed until release():
   * a client reconnecting meanwhile waits, as it would behind a network that is
   * slow to come back, and goes on where it stands once released.
   */
  hold (): void
  /** Relays the connections held, and every new one again. */
  release (): void
  /** Connections waiting for release(). */
  readonly held: number
  /**
   * Once a client sends bytes holding `marker`, what the target sends back is
   * thrown away, on every connection, while what clients send still reaches
   * it: that command is run and its reply lost, as when the network fails
   * between the two.
   */
  dropRepliesFrom (marker: string): void
}

/**
 * A TCP relay on a loopback port in front of `targetPort`: what a client
 * connected through it sees when the network between it and the gateway (or
 * the gateway and Redis) fails (a laptop lid, a proxy restarting), closed in
 * teardown.
 */
export async function startTcpProxy (t: TestLike, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>()
  const waiting: Socket[] = []
  let holding = false
  let dropping = false
  let marker: string | undefined

  function relay (client: Socket): void {
    const upstream = connect(targetPort, '127.0.0.1')
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => { client.destroy(); upstream.destroy() })
    }
    client.on('data', (chunk: Buffer) => {
      if (marker !== undefined && chunk.includes(marker)) dropping = true
    })
    client.pipe(upstream)
    upstream.pipe(new Transform({
      transform (chunk: Buffer, _encoding, done) { done(null, dropping ? undefined : chunk) }
    })).pipe(client)
    client.resume()
  }

  const server = createServer({ pauseOnConnect: true }, (client) => {
    if (!holding) return relay(client)
    // What it sends meanwhile stays in its socket until it is relayed.
    waiting.push(client)
    client.on('error', () => client.destroy())
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const cut = () => {
    for (const socket of sockets) socket.resetAndDestroy()
    dropping = false
    marker = undefined
  }
  t.teardown(() => new Promise<void>((resolve) => {
    cut()
    for (const client of waiting.splice(0)) client.destroy()
    server.close(() => resolve())
  }))
  return {
    port: (server.address() as { port: number }).port,
    cut,
    hold () { holding = true },
    release () {
      holding = false
      for (const client of waiting.splice(0)) if (!client.destroyed) relay(client)
    },
    get held () { return waiting.filter(client => !client.destroyed).length },
    dropRepliesFrom (text) { marker = text }
  }
}
