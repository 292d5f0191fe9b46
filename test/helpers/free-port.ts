import { createServer } from 'node:net'

/**
 * A free TCP port on loopback (the kernel's choice, released at once for the process that will bind
 * it).
 */
export function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}
