// `npm run bench -- --transcoder` (or `npx tsx bench/transcode-speed.ts`): the
// transcoder alone, in this process, over the bench's hub bodies: how many
// MB of the hub's bytes it reads per second, each body framed in the fresh
// envelope as the gateway does. No HTTP, no other work: what the bytes cost.
// Timed by the process's CPU time, so that other work on the machine does not
// count; the collector's threads do.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config/load.ts'
import { sandboxEnv } from '../src/sandbox/index.ts'
import { FRESH_FRAME } from '../src/schemas/envelope.ts'
import { resolveOperations } from '../src/upstream/resolve-operations.ts'
import { prepareBodies } from './bodies.ts'

export interface TranscoderSpeed {
  body: string
  bytes: number
  /** Median of the rounds, and every round's figure. */
  mbPerSecond: number
  rounds: number[]
  /** Median time per body, µs. */
  usPerBody: number
}

function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** Each body transcoded for about `ms` per round, `rounds` times. */
export async function measureTranscoder (rounds = 5, ms = 400): Promise<TranscoderSpeed[]> {
  const dir = await mkdtemp(join(tmpdir(), 'transcode-speed-'))
  try {
    const bodies = await prepareBodies(dir)
    const operations = resolveOperations(loadConfig(sandboxEnv('http://127.0.0.1:1')))
    const bl = operations.get('noblbc20')!
    const sp2 = operations.get('document_sp2/host-to-host')!
    const cases = [
      { body: 'BL list, 5 entries', op: bl, bytes: await readFile(bodies.blListFile) },
      { body: 'SP2 list, 20 documents', op: sp2, bytes: await readFile(bodies.sp2.twenty.file) },
      {
        body: 'SP2 list, 500 documents',
        op: sp2,
        bytes: await readFile(bodies.sp2.fiveHundred.file)
      }
    ]
    const results: TranscoderSpeed[] = []
    for (const { body, op, bytes } of cases) {
      const transcode = op.transcode!
      if (transcode(bytes, FRESH_FRAME) === undefined) {
        throw new Error('the transcoder gave up ' +
        `on the bench's ${body}`)
      }
      // Warm-up: optimized code before the rounds.
      for (let i = 0; i < 200; i++) transcode(bytes, FRESH_FRAME)
      const perRound: number[] = []
      const times: number[] = []
      for (let r = 0; r < rounds; r++) {
        // CPU time, not wall time: the machine is shared, and a neighbour's work must not count as
        // ours.
        let n = 0
        const start = process.cpuUsage()
        let elapsed = 0
        while (elapsed < ms * 1e6) {
          for (let k = 0; k < 10; k++) transcode(bytes, FRESH_FRAME)
          n += 10
          const used = process.cpuUsage(start)
          elapsed = (used.user + used.system) * 1e3
        }
        perRound.push(bytes.length * n / (elapsed / 1e9) / 1e6)
        times.push(elapsed / n / 1e3)
      }
      results.push({
        body,
        bytes: bytes.length,
        mbPerSecond: median(perRound),
        rounds: perRound,
        usPerBody: median(times)
      })
    }
    return results
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await measureTranscoder()) {
    process.stdout.write(
      `${r.body} (${r.bytes} bytes): ${r.mbPerSecond.toFixed(0)} MB/s ` +
      `(${r.rounds.map((x) => x.toFixed(0)).join(', ')}), ${r.usPerBody.toFixed(1)} µs per body\n`
    )
  }
}
