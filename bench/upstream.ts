// A minimal upstream for the benchmark: plain node:http serving precomputed
// sandbox bodies at the hub's addresses, after latency +/- jitter. It checks
// the two credential headers (a string comparison) and nothing else, so that
// it is never the bottleneck.
import { readFileSync } from 'node:fs'
import { createServer, type ServerResponse } from 'node:http'
import {
  UPSTREAM_BL_PATH,
  UPSTREAM_READY_PATH,
  UPSTREAM_SP2_PATH,
  type UpstreamConfig
} from './shared.ts'

const configFile = process.argv[2]
if (configFile === undefined) {
  console.error('usage: upstream.ts <config.json>')
  process.exit(2)
}
const config = JSON.parse(readFileSync(configFile, 'utf8')) as UpstreamConfig

const blList = readFileSync(config.blListFile)
const sp2 = new Map<string, Buffer>(
  Object.entries(config.sp2Files).map(([blNo, file]) => [blNo, readFileSync(file)])
)
const EMPTY_LIST = Buffer.from('[]')
const UNAUTHORIZED = Buffer.from('{"message":"Unauthorized"}')
const NOT_FOUND = Buffer.from('{"message":"Not Found"}')

/** The path without a trailing slash, so both spellings match. */
function trim (path: string): string {
  return path.endsWith('/') ? path.slice(0, -1) : path
}
const BL_PATH = trim(UPSTREAM_BL_PATH)
const SP2_PATH = trim(UPSTREAM_SP2_PATH)

function delay (): number {
  const jitter = config.jitterMs > 0 ? (Math.random() * 2 - 1) * config.jitterMs : 0
  return Math.max(0, config.latencyMs + jitter)
}

function send (res: ServerResponse, status: number, body: Buffer): void {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': body.length
  })
  res.end(body)
}

const server = createServer((req, res) => {
  const url = req.url ?? '/'
  const q = url.indexOf('?')
  const path = trim(q === -1 ? url : url.slice(0, q))
  if (path === UPSTREAM_READY_PATH) {
    send(res, 200, Buffer.from('{"ready":true}'))
    return
  }
  let body: Buffer
  let status = 200
  if (
    req.headers[config.apiKeyHeader] !== config.apiKey ||
    req.headers.authorization !== config.accessToken
  ) {
    status = 401
    body = UNAUTHORIZED
  } else if (path === BL_PATH) {
    body = blList
  } else if (path === SP2_PATH) {
    const blNo = new URLSearchParams(q === -1 ? '' : url.slice(q + 1)).get('bl_no')
    body = (blNo !== null ? sp2.get(blNo) : undefined) ?? EMPTY_LIST
  } else {
    status = 404
    body = NOT_FOUND
  }
  // Drain any request body so the connection stays reusable.
  req.resume()
  setTimeout(send, delay(), res, status, body)
})

// Longer than the clients' keep-alive, so the server never closes an idle
// connection the pool is about to reuse.
server.keepAliveTimeout = 65_000
server.headersTimeout = 66_000
server.listen(config.port, config.host)

const stop = (): void => {
  server.close(() => process.exit(0))
  server.closeAllConnections()
}
process.once('SIGTERM', stop)
process.once('SIGINT', stop)
