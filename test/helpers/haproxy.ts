import { readFileSync } from 'node:fs'

/** An HAProxy configuration as sections of lines of words, comments removed. */
export interface HaproxySection { kind: string, name: string, lines: string[][] }

const SECTION_KINDS = new Set([
  'global',
  'defaults',
  'frontend',
  'backend',
  'listen',
  'resolvers',
  'peers',
  'userlist',
  'program',
  'http-errors',
  'ring',
  'mailers',
  'cache'
])

export function readHaproxy (file: string): HaproxySection[] {
  return parseHaproxy(readFileSync(file, 'utf8'))
}

export function parseHaproxy (text: string): HaproxySection[] {
  const sections: HaproxySection[] = []
  for (const raw of text.split('\n')) {
    const words = raw.replace(/(^|\s)#.*$/, '').trim().split(/\s+/).filter(word => word !== '')
    const [first, second] = words
    if (first === undefined) continue
    if (SECTION_KINDS.has(first) && !/^\s/.test(raw)) {
      sections.push({ kind: first, name: second ?? '', lines: [] })
    } else if (sections.length === 0) {
      throw new Error('haproxy: ' + `"${raw.trim()}" is outside any section`)
    } else sections.at(-1)?.lines.push(words)
  }
  return sections
}

const UNITS: Record<string, number> = {
  us: 0.001,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000
}

/** An HAProxy time (`60s`, `500ms`, `1h`; a bare number is milliseconds), in milliseconds. */
export function haproxyTime (value: string): number {
  const match = /^([0-9]+)(us|ms|s|m|h|d)?$/.exec(value)
  if (match === null) throw new Error(`haproxy: ${value} is not a time`)
  return Number(match[1]) * (UNITS[match[2] ?? 'ms'] ?? 1)
}

/** `timeout <name>` in a section, else in the defaults, in milliseconds. */
export function haproxyTimeout (
  sections: HaproxySection[],
  name: string,
  section?: HaproxySection
): number | undefined {
  for (const where of [section, ...sections.filter((s) => s.kind === 'defaults')]) {
    const line = where?.lines.find((words) => words[0] === 'timeout' && words[1] === name)
    if (line?.[2] !== undefined) return haproxyTime(line[2])
  }
  return undefined
}

export function backends (sections: HaproxySection[]): HaproxySection[] {
  return sections.filter(s => s.kind === 'backend' || s.kind === 'listen')
}

/** The `server` lines of a backend: name, host and port. */
export function servers (
  backend: HaproxySection
): Array<{ name: string; host: string; port: number }> {
  return backend.lines
    .filter((words) => words[0] === 'server')
    .map((words) => {
      const address = words[2] ?? ''
      const colon = address.lastIndexOf(':')
      return {
        name: words[1] ?? '',
        host: address.slice(0, colon),
        port: Number(address.slice(colon + 1))
      }
    })
}

/**
 * The path a backend's HTTP health check asks for (`http-check send … uri X`, or `option httpchk
 * [METH] X`).
 */
export function healthCheck (
  backend: HaproxySection
): { method: string; path: string; expect?: string } | undefined {
  const option = backend.lines.find((words) => words[0] === 'option' && words[1] === 'httpchk')
  if (option === undefined) return undefined
  const send = backend.lines.find((words) => words[0] === 'http-check' && words[1] === 'send')
  const expect = backend.lines
    .find((words) => words[0] === 'http-check' && words[1] === 'expect')
    ?.slice(2)
    .join(' ')
  const after = (words: string[] | undefined, key: string) =>
    words === undefined || words.indexOf(key) === -1 ? undefined : words[words.indexOf(key) + 1]
  const path = after(send, 'uri') ?? (option.length >= 4 ? option[3] : option[2]) ?? '/'
  const method = after(send, 'meth') ?? (option.length >= 4 ? option[2] : undefined) ?? 'OPTIONS'
  return { method, path, ...(expect === undefined ? {} : { expect }) }
}

/**
 * deploy/haproxy.cfg made runnable on this machine, everything else kept:
 * the frontend binds a loopback port, the backend's servers become one
 * gateway at `gateway` (the compose file's replica host names resolve only
 * in compose), the compose DNS resolvers go, and the global `maxconn` is
 * lowered to 1000 (HAProxy raises its open-file limit to about twice
 * maxconn at start and refuses to start where the machine allows fewer).
 * The defaults, timeouts, options and health check are the file's own.
 */
export function localHaproxyConfig (
  text: string,
  { listen, gateway }: { listen: number; gateway: { host: string; port: number } }
): string {
  const out: string[] = []
  let section = ''
  let serverWritten = false
  for (const line of text.split('\n')) {
    const words = line
      .replace(/(^|\s)#.*$/, '')
      .trim()
      .split(/\s+/)
      .filter((word) => word !== '')
    const [first] = words
    if (first !== undefined && SECTION_KINDS.has(first) && !/^\s/.test(line)) section = first
    if (section === 'resolvers') continue
    if (first === 'bind') {
      out.push(`    bind 127.0.0.1:${listen}`)
    } else if (first === 'server') {
      if (!serverWritten) {
        out.push(`    server ${words[1] ?? 'gateway'} ` +
        `${gateway.host}:${gateway.port}`)
      }
      serverWritten = true
    } else if (first === 'default-server') {
      const at = words.indexOf('resolvers')
      out.push(
        `    ${(at === -1 ? words : [...words.slice(0, at), ...words.slice(at + 2)]).join(' ')}`
      )
    } else if (section === 'global' && first === 'maxconn') {
      out.push('    maxconn 1000')
    } else {
      out.push(line)
    }
  }
  return out.join('\n')
}
