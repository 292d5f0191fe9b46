import { connect, createServer, type Socket } from 'node:net'

/** The subset of a tap `Test` the helper uses. */
interface TestLike { teardown (fn: () => unknown): void }

export interface TcpProxy {
  readonly port: number
  /** Drops every connection through it at once, both sides, as a network failure would (no close handshake). */
  cut (): void
}

/**
 * A TCP relay on a loopback port in front of `targetPort`: what a client
 * connected through it sees when the network between it and the gateway
 * fails (a laptop lid, a proxy restarting), closed in teardown.
 */
export async function startTcpProxy (t: TestLike, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1')
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => { client.destroy(); upstream.destroy() })
    }
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const cut = () => { for (const socket of sockets) socket.resetAndDestroy() }
  t.teardown(() => new Promise<void>((resolve) => { cut(); server.close(() => resolve()) }))
  return { port: (server.address() as { port: number }).port, cut }
}
