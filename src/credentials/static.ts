import { readFile, stat } from 'node:fs/promises'
import { systemClock, type Clock } from '../clock.ts'
import type { Credentials } from './types.ts'

/** How often, at most, the token file is looked at (a stat per second). */
const CHECK_INTERVAL_MS = 1000

/**
 * A static token: from configuration, or from a file that is re-read when its
 * modification time changes (secret rotation: a mounted secret replaced in
 * place). The file is checked lazily on use, at most once a second, so no
 * timer or watcher is left running.
 */
export function staticCredentials (options: {
  token?: string
  file?: string
  clock?: Clock
}): Credentials {
  const { file, clock = systemClock } = options
  let token = options.token ?? ''
  let mtimeMs = -1
  let checkedAt = 0
  let reading: Promise<void> | undefined

  async function reload (force: boolean): Promise<void> {
    if (file === undefined) return
    const now = clock()
    if (!force && now - checkedAt < CHECK_INTERVAL_MS) return
    checkedAt = now
    reading ??= (async () => {
      try {
        const info = await stat(file)
        if (info.mtimeMs !== mtimeMs || force) {
          token = (await readFile(file, 'utf8')).trim()
          mtimeMs = info.mtimeMs
        }
      } finally {
        reading = undefined
      }
    })()
    await reading
  }

  return {
    mode: 'static',
    async authorization () {
      await reload(false)
      return token
    },
    identity: () => 'static',
    async refresh (used) {
      await reload(true)
      return token !== used
    },
    async close () {}
  }
}
