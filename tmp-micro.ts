import { readFileSync } from 'node:fs'
import { compileTranscoder } from '../src/mapping/transcode.ts'
import { compileNormalizer } from '../src/mapping/normalize.ts'
import { Sp2Document, BlEntry } from '../src/mapping/resources.ts'
import { deepStrictEqual } from 'node:assert'
const tc = compileTranscoder({ type: 'list', item: Sp2Document }, { offset: '+07:00' })
const norm = compileNormalizer(Sp2Document, { offset: '+07:00' })
for (const name of ['20', '500']) {
  const buf = readFileSync(`/tmp/mb/sp2-${name}.json`)
  const r = tc(buf)
  if (!r) throw new Error('gave up on ' + name)
  const ref = JSON.parse(buf.toString()).map((x: any) => norm(x))
  deepStrictEqual(JSON.parse(r.json.toString()), ref)
  console.log(name, 'equal; count', r.count, 'bytes', r.json.length)
  const n = name === '20' ? 4000 : 150
  const time = (label: string, f: () => unknown) => { for (let i = 0; i < n / 4; i++) f(); const t = process.hrtime.bigint(); for (let i = 0; i < n; i++) f(); console.log(name, label, (Number(process.hrtime.bigint() - t) / 1e6 / n).toFixed(3), 'ms') }
  time('transcode', () => tc(buf))
  time('reference', () => Buffer.from(JSON.stringify(JSON.parse(buf.toString()).map((x: any) => norm(x)))))
}
const bl = compileTranscoder({ type: 'keyed-list', item: BlEntry, key: 'Data BL BC 2.0' }, { offset: '+07:00' })
const blBuf = readFileSync('/tmp/mb/bl-list.json')
console.log(bl(blBuf)?.json.toString())
