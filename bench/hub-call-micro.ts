// `npx tsx bench/hub-call-micro.ts`: what one hub exchange costs the gateway
// by how undici is asked, measured in one process against a local HTTP
// server answering a BL list (the server's own cost is the same in every
// row). Variants run interleaved (A, B, C, A, B, C…), each a batch of calls
// with 50 in flight, timed by the process's CPU time; the report is the
// median per call over rounds and every round's figure.
//
// - request + signal: Pool#request with a deadline signal, the body read
//   with stream events (the transport before it moved to Pool#dispatch);
// - request: the same without the signal;
// - dispatch: Pool#dispatch with a handler that keeps the chunks, no body
//   stream, the deadline a timer cleared at the end.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Pool, type Dispatcher } from 'undici'

const body = Buffer.from(
  JSON.stringify({
    noblbc: Array.from({ length: 5 }, (_, i) => ({
      no_bl: `BL${i}`,
      tgl_bl: '2024-01-0' + String(i + 1),
      nama_pemilik: 'PT CONTOH',
      nama_kapal: 'MV KAPAL',
      no_voyage: 'V' + String(i),
      pelabuhan_asal: 'SGSIN'
    }))
  })
)
const server = createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length })
  response.end(body)
})
await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
const pool = new Pool(origin, { connections: 64, keepAliveTimeout: 10_000 })
const headers = {
  accept: 'application/json',
  'user-agent': 'bench',
  'x-request-id': 'r',
  'x-api-key': 'k',
  authorization: 'Bearer t'
}

function readEvents (stream: Dispatcher.ResponseData['body']): Promise<Buffer[]> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    stream.on('data', (chunk: Buffer) => { chunks.push(chunk) })
    stream.once('error', reject)
    stream.once('end', () => resolve(chunks))
  })
}

async function viaRequest (withSignal: boolean): Promise<number> {
  const response = await pool.request({
    method: 'GET',
    path: '/bl?npwp=1',
    headers,
    ...(withSignal ? { signal: AbortSignal.timeout(10_000) } : {})
  })
  const chunks = await readEvents(response.body)
  return chunks.length
}

function viaDispatch (): Promise<number> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const timer = setTimeout(() => reject(new Error('deadline')), 10_000)
    pool.dispatch({ method: 'GET', path: '/bl?npwp=1', headers }, {
      onRequestStart () {},
      onResponseStart (_controller, statusCode) {
        if (statusCode !== 200) reject(new Error(String(statusCode)))
      },
      onResponseData (_controller, chunk) { chunks.push(chunk) },
      onResponseEnd () {
        clearTimeout(timer)
        resolve(chunks.length)
      },
      onResponseError (_controller, error) {
        clearTimeout(timer)
        reject(error)
      }
    })
  })
}

const variants: Array<[string, () => Promise<number>]> = [
  ['request + signal, body by events', async () => await viaRequest(true)],
  ['request, body by events', async () => await viaRequest(false)],
  ['dispatch, chunks kept by the handler', viaDispatch]
]

async function batch (call: () => Promise<number>, n: number): Promise<number> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next++ < n) await call()
  }
  const start = process.cpuUsage()
  await Promise.all(Array.from({ length: 50 }, worker))
  const used = process.cpuUsage(start)
  return (used.user + used.system) / n
}

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const n = Number(process.argv[2] ?? 20_000)
const rounds = Number(process.argv[3] ?? 7)
for (const [, call] of variants) await batch(call, n / 4)
const figures = variants.map(() => [] as number[])
for (let r = 0; r < rounds; r++) {
  const order = variants.map((_, i) => (i + r) % variants.length)
  for (const i of order) figures[i]!.push(await batch(variants[i]![1], n))
}
process.stdout.write(
  '| exchange (client and server in one process) | CPU per call (median) | rounds |\n| --- | ' +
  '---: | --- |\n'
)
variants.forEach(([name], i) => {
  process.stdout.write(
    `| ${name} | ${median(figures[i]!).toFixed(1)} µs | ` +
    `${figures[i]!.map((x) => x.toFixed(1)).join(', ')} |\n`
  )
})
await pool.close()
server.close()
