// The upstream bodies the bench serves, taken once from the sandbox's seeded
// data (so they have the hub's exact shape) and written to a temp directory
// for bench/upstream.ts.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  SANDBOX_ACCESS_TOKEN,
  SANDBOX_API_KEY,
  SANDBOX_FIXTURES,
  startSandbox
} from '../src/sandbox/index.ts'
import { UPSTREAM_BL_PATH, UPSTREAM_SP2_PATH } from './shared.ts'

export const API_KEY_HEADER = 'customs-api-key'
export const BL_LIST_KEY = 'Data BL BC 2.0'
export const BL_LIST_SIZE = 5

export interface Sp2Target {
  npwp: string
  blNo: string
  /** `YYYY-MM-DD` */
  blDate: string
  documents: number
}

export interface Bodies {
  /** NPWP used for the BL list (an ordinary seeded taxpayer). */
  blNpwp: string
  blListFile: string
  blListBytes: number
  /** How many entries of the BL list were synthesized because the seed has fewer. */
  blSynthesized: number
  sp2: {
    twenty: Sp2Target & { file: string; bytes: number }
    fiveHundred: Sp2Target & { file: string; bytes: number }
  }
}

interface BlEntry { bl_no: string, bl_date: string }

async function get (url: string): Promise<string> {
  const res = await fetch(url, {
    headers: { [API_KEY_HEADER]: SANDBOX_API_KEY, authorization: SANDBOX_ACCESS_TOKEN }
  })
  const text = await res.text()
  if (res.status !== 200) {
    throw new Error(`sandbox answered ${res.status} to ${url}: ` +
    `${text.slice(0, 200)}`)
  }
  return text
}

/** Deterministic extra BL entries in the hub's shape, for a list of exactly `size`. */
function padBlList (entries: BlEntry[], size: number): BlEntry[] {
  const out = entries.slice(0, size)
  const carriers = ['MAEU', 'ONEY', 'HLCU', 'OOLU', 'MEDU']
  for (let i = out.length; i < size; i++) {
    out.push({
      bl_no: `${carriers[i % carriers.length] as string}JKT` +
        `${String(7_100_000 + i * 7919).padStart(7, '0')}`,
      bl_date: `2024-0${(i % 6) + 1}-${String(10 + i).padStart(2, '0')} 00:00:00.0`
    })
  }
  return out
}

export async function prepareBodies (dir: string): Promise<Bodies> {
  const sandbox = await startSandbox({ port: 0, host: '127.0.0.1' })
  try {
    const npwp = SANDBOX_FIXTURES.taxpayer.npwp
    const blAnswer = JSON.parse(
      await get(`${sandbox.url}${UPSTREAM_BL_PATH}?npwp=${npwp}`)
    ) as Record<string, BlEntry[]>
    const seeded = blAnswer[BL_LIST_KEY]
    if (!Array.isArray(seeded)) throw new Error(`sandbox BL list has no "${BL_LIST_KEY}"`)
    const blList = JSON.stringify({ [BL_LIST_KEY]: padBlList(seeded, BL_LIST_SIZE) })
    const blListFile = join(dir, 'bl-list.json')
    await writeFile(blListFile, blList)

    const sp2 = async (
      name: string,
      fixture: typeof SANDBOX_FIXTURES.benchmark.twenty
    ): Promise<Sp2Target & { file: string; bytes: number }> => {
      const body = await get(
        `${sandbox.url}${UPSTREAM_SP2_PATH}?npwp_cargo_owner=${fixture.npwp}&bl_no=` +
        `${fixture.blNo}&bl_date=${fixture.blDateCompact}`
      )
      const documents = (JSON.parse(body) as unknown[]).length
      if (documents !== fixture.documents) {
        throw new Error(
          `sandbox answered ${documents} SP2 documents for ${name}, expected ${fixture.documents}`
        )
      }
      const file = join(dir, `sp2-${name}.json`)
      await writeFile(file, body)
      return {
        npwp: fixture.npwp,
        blNo: fixture.blNo,
        blDate: fixture.blDate,
        documents,
        file,
        bytes: Buffer.byteLength(body)
      }
    }

    return {
      blNpwp: npwp,
      blListFile,
      blListBytes: Buffer.byteLength(blList),
      blSynthesized: Math.max(0, BL_LIST_SIZE - seeded.length),
      sp2: {
        twenty: await sp2('20', SANDBOX_FIXTURES.benchmark.twenty),
        fiveHundred: await sp2('500', SANDBOX_FIXTURES.benchmark.fiveHundred)
      }
    }
  } finally {
    await sandbox.close()
  }
}
