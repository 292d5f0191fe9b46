import { connect, createServer, type Socket } from 'node:net'

/** The subset of a tap `Test` the helper uses. */
interface TestLike { teardown (fn: () => unknown): void }

export interface TcpProxy {
  readonly port: number
  /** Drops every connection through it at once, both sides, as a network failure would (no close handshake). */
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
}

/**
 * A TCP relay on a loopback port in front of `targetPort`: what a client
 * connected through it sees when the network between it and the gateway
 * fails (a laptop lid, a proxy restarting), closed in teardown.
 */
export async function startTcpProxy (t: TestLike, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>()
  const waiting: Socket[] = []
  let holding = false

  function relay (client: Socket): void {
    const upstream = connect(targetPort, '127.0.0.1')
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => { client.destroy(); upstream.destroy() })
    }
    client.pipe(upstream)
    upstream.pipe(client)
    client.resume()
  }

  const server = createServer({ pauseOnConnect: true }, (client) => {
    if (!holding) return relay(client)
    // What it sends meanwhile stays in its socket until it is relayed.
    waiting.push(client)
    client.on('error', () => client.destroy())
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const cut = () => { for (const socket of sockets) socket.resetAndDestroy() }
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
    get held () { return waiting.filter(client => !client.destroyed).length }
  }
}
