import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Registry } from 'prom-client'

export interface MetricsServer {
  /** Where it listens, `http://host:port`. */
  url: string
  close (): Promise<void>
}

/**
 * GET /metrics on a listener of its own (METRICS_PORT), so that the
 * Prometheus text need not be reachable where the API is: a plain
 * node:http server, since one route with no input needs none of Fastify's
 * parts. Anything else is a 404; only GET and HEAD are answered.
 */
export async function startMetricsServer (
  registry: Registry,
  { host, port }: { host: string; port: number }
): Promise<MetricsServer> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0]
    if (path !== '/metrics') {
      response
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
        .end('Not found: the metrics listener serves GET /metrics only\n')
      return
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response
        .writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' })
        .end('Method not allowed\n')
      return
    }
    registry.metrics().then(
      (text) => {
        response.writeHead(200, { 'content-type': registry.contentType })
        response.end(request.method === 'HEAD' ? undefined : text)
      },
      () => {
        response
          .writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
          .end('Metrics could not be collected\n')
      }
    )
  })
  // A scrape is one short request: no connection is kept waiting for long.
  server.keepAliveTimeout = 5_000
  server.headersTimeout = 10_000
  server.requestTimeout = 10_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address() as AddressInfo
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address
  return {
    url: `http://${shown}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}
