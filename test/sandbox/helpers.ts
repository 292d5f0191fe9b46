import { SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, startSandbox } from '../../src/sandbox/index.ts'
import type { Sandbox, SandboxOptions } from '../../src/sandbox/index.ts'

// Shared by the sandbox tests: start a sandbox that closes with the test, and
// call it over real HTTP with global fetch.

export const KEY = { 'customs-api-key': SANDBOX_API_KEY }
export const TOKEN = { authorization: SANDBOX_ACCESS_TOKEN }
export const AUTH = { ...KEY, ...TOKEN }

/** The addresses as docs/hub.md#addresses-and-credentials writes them, with the segment HUB. */
export const LOOKUP = '/V1/HUB/INT/AUTH'
export const DEV = '/HUB-DEV'
export const V3 = '/V3/HUB'

interface Teardown {
  teardown (fn: () => unknown): void
}

export async function sandbox (t: Teardown, options?: SandboxOptions): Promise<Sandbox> {
  const sb = await startSandbox(options)
  t.teardown(() => sb.close())
  return sb
}

export interface Reply {
  status: number
  headers: Headers
  text: string
  /** Parsed JSON, or undefined when the text is not JSON. */
  body: unknown
}

function parse (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

export async function call (sb: Sandbox, method: string, path: string, init: { headers?: Record<string, string>, body?: unknown, raw?: string } = {}): Promise<Reply> {
  const res = await fetch(sb.url + path, {
    method,
    headers: { ...(init.body !== undefined || init.raw !== undefined ? { 'content-type': 'application/json' } : {}), ...init.headers },
    body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
    signal: AbortSignal.timeout(10_000)
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, body: parse(text) }
}

export function get (sb: Sandbox, path: string, headers: Record<string, string> = AUTH): Promise<Reply> {
  return call(sb, 'GET', path, { headers })
}

export function post (sb: Sandbox, path: string, body: unknown, headers: Record<string, string> = AUTH): Promise<Reply> {
  return call(sb, 'POST', path, { headers, body })
}

export function qs (params: Record<string, string>): string {
  return '?' + new URLSearchParams(params).toString()
}

/** Path segments, each percent-encoded, in the order given. */
export function segments (...values: string[]): string {
  return values.map((v) => '/' + encodeURIComponent(v)).join('')
}

/**
 * ISO 6346 check, written independently of src/sandbox/iso6346.ts. Strict:
 * a serial whose remainder is 10 counts as invalid.
 */
export function iso6346Valid (containerNo: string): boolean {
  if (!/^[A-Z]{3}U\d{7}$/.test(containerNo)) return false
  const values: Record<string, number> = {}
  let v = 10
  for (let c = 65; c <= 90; c++) {
    if ([11, 22, 33].includes(v)) v++
    values[String.fromCharCode(c)] = v++
  }
  let sum = 0
  for (let i = 0; i < 10; i++) {
    const ch = containerNo[i] ?? ''
    sum += (i < 4 ? values[ch] ?? NaN : Number(ch)) * Math.pow(2, i)
  }
  const rest = sum % 11
  return rest !== 10 && rest === Number(containerNo[10])
}

export function isRecord (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
