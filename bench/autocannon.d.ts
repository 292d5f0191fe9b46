// The part of autocannon 8's programmatic API the bench uses (it ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  interface RequestParams {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string | Buffer
  }

  interface Request extends RequestParams {
    /** Called before each request; returns the request to send. */
    setupRequest?: (request: RequestParams, context: Record<string, unknown>) => RequestParams
  }

  interface Options {
    url: string
    requests?: Request[]
    connections?: number
    duration?: number
    /** Requests to send; when given, `duration` is not used. */
    amount?: number
    /** Milliseconds between samples; the end of the run is noticed at a sample (default 1000). */
    sampleInt?: number
    pipelining?: number
    timeout?: number
    headers?: Record<string, string>
  }

  interface Histogram {
    average: number
    mean: number
    stddev: number
    min: number
    max: number
    p50: number
    p99: number
    total: number
  }

  interface Result {
    duration: number
    errors: number
    timeouts: number
    non2xx: number
    resets: number
    '2xx': number
    statusCodeStats: Record<string, { count: number }>
    latency: Histogram
    requests: Histogram & { sent: number }
    throughput: Histogram
  }

  interface Instance extends EventEmitter {
    stop(): void
    on(
      event: 'response',
      listener: (
        client: unknown,
        statusCode: number,
        resBytes: number,
        responseTime: number
      ) => void
    ): this
    on(event: string, listener: (...args: unknown[]) => void): this
  }

  function autocannon (
    options: Options,
    callback: (error: Error | null, result: Result) => void
  ): Instance

  export default autocannon
  export type { Instance, Options, Request, RequestParams, Result }
}
