import { readFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import { test } from 'tap'
import { prepareBodies } from './fixtures/hub-bodies.ts'
import { ConfigError, loadConfig } from '../src/config/load.ts'
import { sandboxEnv } from '../src/sandbox/index.ts'
import { SANDBOX_FIXTURES } from '../src/sandbox/index.ts'
import { FRESH_FRAME } from '../src/schemas/envelope.ts'
import { resolveOperations } from '../src/upstream/resolve-operations.ts'
import { transferableSymbol, valueSymbol } from 'piscina'
import { createTranscodePool, threadSetup, transcodeThreads } from '../src/upstream/transcode-pool.ts'
import { threadHandler, type TranscodeResult } from '../src/upstream/transcode-thread.ts'
import { build } from './helper.ts'
import { BUILT_IN } from '../src/profile/built-in.ts'

/**
 * Large answers transcoded on worker threads (piscina, real threads running
 * src/upstream/transcode-worker.mts): the same bytes as on the main thread.
 */
const config = loadConfig(sandboxEnv('http://127.0.0.1:1'))
const operations = resolveOperations(config)
const sp2 = operations.get('document_sp2/host-to-host')!
const setup = threadSetup(operations, BUILT_IN.timeZone)
const frame = FRESH_FRAME
const never = new AbortController().signal

/** The body in chunks, as undici hands it over. */
function chunked (body: Buffer, size = 64 * 1024): Buffer[] {
  const chunks: Buffer[] = []
  for (let at = 0; at < body.length; at += size) chunks.push(body.subarray(at, at + size))
  return chunks
}

test('TRANSCODE_THREADS: auto is one thread per core beyond the first, at most 4; a number is taken as it is', async (t) => {
  t.equal(transcodeThreads('auto', 1), 0, 'one core: all on the main thread')
  t.equal(transcodeThreads('auto', 2), 1)
  t.equal(transcodeThreads('auto', 3), 2)
  t.equal(transcodeThreads('auto', 64), 4)
  t.equal(transcodeThreads('0', 8), 0)
  t.equal(transcodeThreads('16', 1), 16)
  t.equal(loadConfig({}).TRANSCODE_THREADS, '0', 'the default: the main thread only')
  for (const bad of ['17', '-1', '1.5', 'two', 'autox']) {
    let problems: string[] = []
    try {
      loadConfig({ TRANSCODE_THREADS: bad })
    } catch (error) {
      if (error instanceof ConfigError) problems = error.problems
    }
    t.same(problems, ['TRANSCODE_THREADS: must be a number of threads from 0 to 16, or auto, such as 2'], `${bad} is refused, naming the setting and the rule`)
  }
})

test('a thread\'s work, run here: the answer and the body go back by transfer, not copy', async (t) => {
  const bodies = await prepareBodies(t.testdir())
  const handle = threadHandler(setup)
  const file = await readFile(bodies.sp2.twenty.file)
  const body = new Uint8Array(new ArrayBuffer(file.length + 100), 0, file.length)
  body.set(file)
  const moved = handle({ operation: sp2.id, body }) as Record<symbol, unknown>
  const result = moved[valueSymbol] as TranscodeResult
  const inline = sp2.transcode!(file, frame)!
  t.equal(result.body, body, 'the body, to be reused')
  t.ok(Buffer.from(result.framed!).equals(inline.framed), 'the envelope as on the main thread')
  t.ok(Buffer.from(result.framed!.buffer, result.jsonStart, result.jsonLength).equals(inline.json), 'the JSON where it says')
  t.equal(result.count, bodies.sp2.twenty.documents)
  t.same(moved[transferableSymbol], [body.buffer, result.framed!.buffer], 'both buffers are transferred')
  t.equal(result.framed!.byteLength, result.framed!.buffer.byteLength, 'the envelope owns its whole buffer')

  const small = new Uint8Array(new ArrayBuffer(2))
  small.set([0x5b, 0x5d])
  const empty = (handle({ operation: sp2.id, body: small }) as Record<symbol, unknown>)[valueSymbol] as TranscodeResult
  t.equal(empty.framed!.byteLength, empty.framed!.buffer.byteLength, 'a small envelope is copied out of Node\'s shared pool before it is moved')
  t.equal(Buffer.from(empty.framed!).toString(), '{"data":[],"meta":{"count":0,"cached":false}}')

  const bad = new Uint8Array(new ArrayBuffer(3))
  bad.set([0x5b, 0x31, 0x5d])
  const gaveUp = handle({ operation: sp2.id, body: bad }) as Record<symbol, unknown>
  t.same(gaveUp[valueSymbol], { body: bad, jsonStart: 0, jsonLength: 0, count: undefined, drift: 0 }, 'gave up: the body alone comes back')
  t.same(gaveUp[transferableSymbol], [bad.buffer])
  t.throws(() => handle({ operation: 'no-such-operation', body: bad }), /unknown operation/)
})

test('on a thread, the 20- and 500-document lists come out byte for byte as on the main thread', async (t) => {
  const bodies = await prepareBodies(t.testdir())
  const pool = createTranscodePool(1, setup)
  t.teardown(() => pool.close())
  const results = []
  for (const target of [bodies.sp2.fiveHundred, bodies.sp2.twenty, bodies.sp2.fiveHundred]) {
    const body = await readFile(target.file)
    const inline = sp2.transcode!(body, frame)!
    const threaded = await pool.run(sp2.id, chunked(body), body.length, never)
    if ('gaveUp' in threaded) {
      t.fail('the thread gave up on a well-formed list')
      continue
    }
    t.ok(threaded.framed.equals(inline.framed), `${target.documents} documents: the same envelope, byte for byte`)
    t.ok(threaded.json.equals(inline.json), 'the same JSON')
    t.equal(threaded.json.buffer, threaded.framed.buffer, 'the JSON is a view into the envelope')
    t.equal(threaded.count, target.documents)
    results.push({ framed: threaded.framed, copy: Buffer.from(threaded.framed) })
  }
  // The second large body reused the first one's buffer on its way to the thread: no answer shares it.
  for (const { framed, copy } of results) t.ok(framed.equals(copy), 'an answer is unchanged by the runs after it')
})

test('an answer the transcoder gives up on comes back whole, for the reference path', async (t) => {
  const bodies = await prepareBodies(t.testdir())
  const pool = createTranscodePool(1, setup)
  t.teardown(() => pool.close())
  const good = await readFile(bodies.sp2.fiveHundred.file, 'utf8')
  // A number where the spec wants text, in the last document: found after most of the work.
  const at = good.lastIndexOf('"sp2_id":"') + '"sp2_id":'.length
  const end = good.indexOf('"', at + 1) + 1
  const bad = Buffer.from(good.slice(0, at) + '12345' + good.slice(end))
  t.equal(sp2.transcode!(bad, frame), undefined, 'the main thread gives up on it too')
  const result = await pool.run(sp2.id, chunked(bad), bad.length, never)
  t.ok('gaveUp' in result && result.gaveUp.equals(bad), 'the body itself, to read again')
})

test('a task whose deadline has passed, or one for an operation the thread does not know, is refused', async (t) => {
  const pool = createTranscodePool(1, setup)
  t.teardown(() => pool.close())
  const body = Buffer.from('[]')
  await t.rejects(pool.run(sp2.id, [body], body.length, AbortSignal.abort()), { name: 'AbortError' })
  await t.rejects(pool.run('no-such-operation', [body], body.length, never), /unknown operation no-such-operation/)
  const fine = await pool.run(sp2.id, [body], body.length, never)
  t.ok('framed' in fine && fine.count === 0, 'the thread still answers after a failed task')
  await pool.close()
  await t.rejects(pool.run(sp2.id, [body], body.length, never), /closed/, 'closed: nothing more runs')
})

test('through the gateway: the 500-document list is the same on a thread and on the main thread', async (t) => {
  const { npwp, blNo, blDate, documents } = SANDBOX_FIXTURES.benchmark.fiveHundred
  const url = `/v1/sp2/documents?npwp=${npwp}&blNo=${blNo}&blDate=${blDate}`
  const payloads: Buffer[] = []
  // Hub timeouts and deadline of a minute: on a loaded machine the 500-document answer may
  // take longer than the default 10 s, which is not what this test is about.
  const slow = { defaults: { timeouts: { headersMs: 60_000, bodyMs: 60_000 } } }
  for (const threads of ['1', '0']) {
    const env = { TRANSCODE_THREADS: threads, UPSTREAM_DEADLINE_MS: '60000' }
    const { app } = await build(t, { env, profile: slow })
    const res = await app.inject({ url })
    t.equal(res.statusCode, 200)
    t.equal(res.json<{ meta: { count: number } }>().meta.count, documents)
    const slowPath = await app.metrics.registry.getSingleMetric('gateway_upstream_slow_path_total')?.get()
    t.same(slowPath?.values ?? [], [], `TRANSCODE_THREADS=${threads}: the fast path read it`)
    payloads.push(res.rawPayload)
  }
  t.ok(payloads[0]!.equals(payloads[1]!), 'byte for byte')
})

test('through the gateway: a large answer a thread gives up on is read by the reference path, as on the main thread', async (t) => {
  const bodies = await prepareBodies(t.testdir())
  const { npwp, blNo, blDate, documents } = bodies.sp2.fiveHundred
  // Key drift: the list under `data` instead of at the top. A real HTTP server, like a hub that changed.
  const drifted = Buffer.concat([Buffer.from('{"data":'), await readFile(bodies.sp2.fiveHundred.file), Buffer.from('}')])
  const hub = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': drifted.length }).end(drifted))
  await new Promise<void>(resolve => hub.listen(0, '127.0.0.1', resolve))
  t.teardown(() => hub.close())
  const url = `http://127.0.0.1:${(hub.address() as { port: number }).port}`
  const payloads: Buffer[] = []
  for (const threads of ['1', '0']) {
    const { app, logs } = await build(t, { env: { TRANSCODE_THREADS: threads, UPSTREAM_HUB_URL: url, UPSTREAM_BASE_URL: url, CACHE_TTL_SECONDS: '0' } })
    const res = await app.inject({ url: `/v1/sp2/documents?npwp=${npwp}&blNo=${blNo}&blDate=${blDate}` })
    t.equal(res.statusCode, 200, res.body.slice(0, 200))
    t.equal(res.json<{ meta: { count: number } }>().meta.count, documents)
    const slowPath = await app.metrics.registry.getSingleMetric('gateway_upstream_slow_path_total')?.get()
    t.same(slowPath?.values.map(v => v.value), [1], `TRANSCODE_THREADS=${threads}: read by the reference path`)
    t.ok(logs.some(l => /drift/i.test(String(l.msg))), 'the drift is logged')
    payloads.push(res.rawPayload)
  }
  t.ok(payloads[0]!.equals(payloads[1]!), 'byte for byte')
})
