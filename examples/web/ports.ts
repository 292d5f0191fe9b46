import { createServer } from 'node:net'

/**
 * The ports `npm run example` listens on: the one asked for, or, when it was
 * only the default and is taken, a free one, said out loud; a port asked for
 * that is taken is an error that says so (never EADDRINUSE from deep inside).
 */

export interface PortChoice {
  port: number
  /** Why it is not the default, when it is not. */
  note?: string
}

export class PortTakenError extends Error {}

/** Whether a port can be listened on at `host` now: tried, and closed again. */
export async function isFree (port: number, host: string): Promise<boolean> {
  return await new Promise((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, host, () => server.close(() => resolve(true)))
  })
}

/** A port free at `host` now (the system's choice). */
export async function freePort (host: string): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** What answers on a taken port, in words, when it is a customs gateway. */
async function whoHolds (port: number, host: string): Promise<string> {
  try {
    const res = await fetch(`http://${host}:${port}/health/live`, { signal: AbortSignal.timeout(3000) }) // generous: only asked when the port is already taken
    const body = await res.json() as { data?: { status?: unknown } }
    if (body.data?.status === 'ok') return ' (a customs gateway answers there)'
  } catch {}
  return ''
}

/**
 * `wanted` when it is free (0: a free port); else, when `explicit` (the
 * person asked for it), PortTakenError naming the option to change; else a
 * free port and a note saying why.
 */
export async function choosePort ({ wanted, explicit, host, what, option }: { wanted: number, explicit: boolean, host: string, what: string, option: string }): Promise<PortChoice> {
  if (wanted === 0) return { port: await freePort(host) }
  if (await isFree(wanted, host)) return { port: wanted }
  const holder = await whoHolds(wanted, host)
  if (explicit) throw new PortTakenError(`port ${wanted} for ${what} is taken${holder}: choose another with ${option} <port>, or ${option} 0 for any free one`)
  return { port: await freePort(host), note: `port ${wanted}, the default for ${what}, is taken${holder}: using a free one instead (${option} <port> chooses)` }
}
