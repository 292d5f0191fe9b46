import { setTimeout as sleep } from 'node:timers/promises'
import { Agent, request } from 'undici'
import { codeOf } from '../errors.ts'
import { parseJson, type Json } from './observe.ts'

/** One hub call's outcome: an answer, or why there was none. */
export interface CallResult {
  status: number | undefined
  /**
   * undici's or Node's code when there was no answer (ECONNREFUSED, UND_ERR_HEADERS_TIMEOUT, ...).
   */
  error: string | undefined
  body: Json | undefined
  /** The first characters of a body that is not JSON. */
  text: string
  ms: number
}

/** Bodies read at most, per call: the probe reads shapes, not whole lists. */
const BODY_LIMIT = 4 * 1024 * 1024

/**
 * The probe's only way to the hub: GET, never anything else (the probe
 * sends no offer, booked call, finalization or SP2 write), at most
 * `maxCalls` calls, `pauseMs` apart. `get` answers undefined once the bound
 * is reached, without calling.
 */
export class HubCalls {
  readonly maxCalls: number
  private readonly pauseMs: number
  private readonly agent: Agent
  private made = 0

  constructor (options: { maxCalls: number; pauseMs: number; timeoutMs: number }) {
    this.maxCalls = options.maxCalls
    this.pauseMs = options.pauseMs
    this.agent = new Agent({
      connect: { timeout: options.timeoutMs },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connections: 1
    })
  }

  get count (): number {
    return this.made
  }

  async get (
    url: string,
    headers: Readonly<Record<string, string>>
  ): Promise<CallResult | undefined> {
    if (this.made >= this.maxCalls) return undefined
    if (this.made > 0 && this.pauseMs > 0) await sleep(this.pauseMs)
    this.made++
    const started = performance.now()
    try {
      const response = await request(url, { method: 'GET', headers, dispatcher: this.agent })
      let size = 0
      const chunks: Buffer[] = []
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        size += chunk.length
        if (size > BODY_LIMIT) break
        chunks.push(chunk)
      }
      const text = Buffer.concat(chunks).toString('utf8')
      return {
        status: response.statusCode,
        error: undefined,
        body: parseJson(text),
        text: text.slice(0, 200),
        ms: Math.round(performance.now() - started)
      }
    } catch (error) {
      return {
        status: undefined,
        error: codeOf(error) ?? (error instanceof Error ? error.message : String(error)),
        body: undefined,
        text: '',
        ms: Math.round(performance.now() - started)
      }
    }
  }

  async close (): Promise<void> {
    await this.agent.close()
  }
}
