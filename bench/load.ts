// One load run with autocannon (programmatic), with exact latency
// percentiles: autocannon's histogram has 1 ms resolution, too coarse for a
// 2 ms target, so every 2xx response time is also kept and sorted here.
import autocannon, { type RequestParams, type Result } from 'autocannon'

export interface LoadResult {
  /** 2xx responses per second. */
  rps: number
  /** Latency of 2xx responses, ms. */
  p50: number
  p99: number
  mean: number
  /** 2xx responses. */
  ok: number
  non2xx: number
  errors: number
  timeouts: number
  /** Status codes seen, with counts. */
  statuses: Record<string, number>
  /** Mean response size, bytes (headers included). */
  bytesPerResponse: number
  durationS: number
}

export interface LoadOptions {
  url: string
  connections: number
  durationS: number
  /** Requests to send (autocannon's `amount`) instead of running for `durationS`. */
  amount?: number
  /** When given, each request's path and query come from it instead of `url`'s. */
  nextPath?: () => string
  headers?: Record<string, string>
  /**
   * Requests per second over all connections (autocannon's overallRate); 0 or absent for as many as
   * they carry.
   */
  rate?: number
}

/** Nearest-rank percentile of a sorted array. */
export function percentile (sorted: Float64Array | number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)))
  return sorted[rank - 1] as number
}

export async function runLoad (
  { url, connections, durationS, amount, nextPath, headers, rate }: LoadOptions
): Promise<LoadResult> {
  let times = new Float64Array(1 << 14)
  let count = 0
  let bytes = 0
  let responses = 0
  const result = await new Promise<Result>((resolve, reject) => {
    const requests =
      nextPath === undefined
        ? undefined
        : [
            {
              setupRequest: (request: RequestParams): RequestParams => ({
                ...request,
                path: nextPath()
              })
            }
          ]
    const length = amount !== undefined && amount > 0 ? { amount } : { duration: durationS }
    // autocannon checks whether the run is over once per sample; at its default of one
    // a second, a 0.5 s run would last 1 s and a 10 s run up to 11 s.
    const instance = autocannon({
      url,
      connections,
      ...length,
      sampleInt: 100,
      pipelining: 1,
      timeout: 10,
      ...(headers !== undefined ? { headers } : {}),
      ...(rate !== undefined && rate > 0 ? { overallRate: rate } : {}),
      ...(requests !== undefined ? { requests } : {})
    }, (error, res) => {
      if (error !== null) reject(error)
      else resolve(res)
    })
    instance.on('response', (_client, statusCode, resBytes, responseTime) => {
      responses++
      bytes += resBytes
      if (statusCode < 200 || statusCode >= 300) return
      if (count === times.length) {
        const bigger = new Float64Array(times.length * 2)
        bigger.set(times)
        times = bigger
      }
      times[count++] = responseTime
    })
  })
  const sorted = times.subarray(0, count).sort()
  let sum = 0
  for (const t of sorted) sum += t
  const statuses: Record<string, number> = {}
  for (const [code, { count: n }] of Object.entries(result.statusCodeStats)) statuses[code] = n
  const elapsedS = result.duration > 0 ? result.duration : durationS
  return {
    rps: count / elapsedS,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: count > 0 ? sum / count : Number.NaN,
    ok: count,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statuses,
    bytesPerResponse: responses > 0 ? bytes / responses : 0,
    durationS: elapsedS
  }
}
