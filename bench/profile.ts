// Self time per function (and per package) from a V8 .cpuprofile, as written
// by `node --cpu-prof`.
import { readFile } from 'node:fs/promises'

interface ProfileNode {
  id: number
  callFrame: {
    functionName: string
    scriptId: string | number
    url: string
    lineNumber: number
    columnNumber: number
  }
  children?: number[]
}

interface CpuProfile {
  nodes: ProfileNode[]
  startTime: number
  endTime: number
  samples: number[]
  timeDeltas: number[]
}

export interface SelfTime {
  name: string
  /** Milliseconds of self time. */
  ms: number
  /** Share of the non-idle time, 0..1. */
  share: number
}

export interface ProfileSummary {
  /** Profile wall time, ms. */
  totalMs: number
  /** Time not idle, ms. */
  busyMs: number
  functions: SelfTime[]
  /** Self time grouped by origin: a package, a gateway source file, node internals, GC. */
  origins: SelfTime[]
}

/**
 * Where a frame comes from: `fastify`, `src/upstream/client.ts`, `node:internal`, `(garbage
 * collector)`...
 */
export function originOf (url: string, functionName: string, scriptId: string | number): string {
  if (url === '') {
    if (functionName.startsWith('(')) return functionName
    // Code without a file: compiled at run time (new Function: serializers, validators, compiled
    // mappers).
    return Number(scriptId) !== 0 ? 'generated code (new Function)' : 'native (C++ builtins)'
  }
  if (url.startsWith('node:')) return 'node internals'
  const nm = url.lastIndexOf('/node_modules/')
  if (nm !== -1) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/')
    return rest[0]?.startsWith('@') === true ? `${rest[0]}/${rest[1] ?? ''}` : rest[0] ?? url
  }
  const m = /\/(src|dist)\/(.*)$/.exec(url)
  if (m !== null) return `${m[1] ?? ''}/${m[2] ?? ''}`
  return url.replace(/^file:\/\//, '')
}

function shortUrl (url: string): string {
  const nm = url.lastIndexOf('/node_modules/')
  if (nm !== -1) return url.slice(nm + '/node_modules/'.length)
  const m = /\/((?:src|dist)\/.*)$/.exec(url)
  if (m !== null) return m[1] ?? url
  return url.replace(/^file:\/\//, '')
}

/**
 * `fromSeconds`: samples taken earlier than this after the profile started
 * are left out (start-up: module loading, schema compilation).
 */
export async function summarizeProfile (
  file: string,
  top = 25,
  fromSeconds = 0
): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile
  const byId = new Map<number, ProfileNode>(profile.nodes.map((n) => [n.id, n]))
  const parentOf = new Map<number, ProfileNode>()
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parentOf.set(child, node)
  }
  /**
   * The nearest caller that has a source file, to say where a native or generated frame is used.
   */
  const callerOf = (id: number): string | undefined => {
    for (let p = parentOf.get(id); p !== undefined; p = parentOf.get(p.id)) {
      if (p.callFrame.url !== '') {
        return `${p.callFrame.functionName || '(anonymous)'} ` +
        `${shortUrl(p.callFrame.url)}:${p.callFrame.lineNumber + 1}`
      }
    }
    return undefined
  }
  const selfUs = new Map<number, number>()
  let elapsedUs = 0
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i] as number
    elapsedUs += profile.timeDeltas[i] ?? 0
    if (elapsedUs < fromSeconds * 1e6) continue
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
  }
  const functions = new Map<string, number>()
  const origins = new Map<string, number>()
  let idle = 0
  let total = 0
  for (const [id, us] of selfUs) {
    const node = byId.get(id)
    if (node === undefined) continue
    total += us
    const { functionName, url, lineNumber, scriptId } = node.callFrame
    if (functionName === '(idle)') {
      idle += us
      continue
    }
    const origin = originOf(url, functionName, scriptId)
    let name: string
    if (url !== '') name = `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}`
    else if (functionName.startsWith('(')) name = functionName
    else {
      const caller = callerOf(id)
      name =
        `${functionName || '(anonymous)'} ` +
        `[${origin.startsWith('generated') ? 'generated' : 'native'}` +
        `${caller !== undefined ? `, called from ${caller}` : ''}]`
    }
    functions.set(name, (functions.get(name) ?? 0) + us)
    origins.set(origin, (origins.get(origin) ?? 0) + us)
  }
  const busy = total - idle
  const rank = (map: Map<string, number>, n: number): SelfTime[] =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => ({ name, ms: us / 1000, share: busy > 0 ? us / busy : 0 }))
  return {
    totalMs: total / 1000,
    busyMs: busy / 1000,
    functions: rank(functions, top),
    origins: rank(origins, 15)
  }
}
