import { gatewayError, isGatewayError } from '../errors.ts'

/**
 * What the routes that answer from several hub lookups at once (the
 * taxpayer's BL lists, a shipment) share: how a failed source is reported in
 * `meta.sources` while the others are answered, and how their calls stay
 * within the caller's share of the hub.
 */

export interface FailedSource {
  status: 'failed'
  code: string
  message: string
  upstreamMessage?: string
}

/**
 * A failed source as `meta.sources` reports it: the error's code and sentence (a bug is INTERNAL,
 * its details only in the log).
 */
export function failedSource (reason: unknown): FailedSource {
  const error = isGatewayError(reason) ? reason : gatewayError('INTERNAL')
  return {
    status: 'failed',
    code: error.code,
    message: error.message,
    ...(error.upstreamMessage === undefined ? {} : { upstreamMessage: error.upstreamMessage })
  }
}

/**
 * What decides a source's share of a composed answer, for the answer's
 * entity tag (upstream/entity-tag.ts, composedTag): its answer's tag, or how it failed.
 */
export function outcomeTag (result: PromiseSettledResult<{ readonly etag: string }>): string {
  return result.status === 'fulfilled'
    ? result.value.etag
    : JSON.stringify(failedSource(result.reason))
}

/**
 * Runs the tasks with at most `atOnce` of them in flight (0: all at once)
 * and settles each, in order. A route's hub calls go through it with the
 * caller's share (UPSTREAM_MAX_CALLS_PER_CLIENT) as the bound, so that one
 * request alone never has more calls in flight than the share admits and
 * turns its own sources into 429s. Nothing waits for a place in the share
 * (a call over it is refused at once), so a request holding places cannot
 * wait on itself. Written here: ten lines, where p-limit and the like would
 * add a dependency (and a queue object per request) for three tasks.
 */
export async function settleAtMost<T> (
  tasks: ReadonlyArray<() => Promise<T>>,
  atOnce: number
): Promise<Array<PromiseSettledResult<T>>> {
  const results: Array<PromiseSettledResult<T>> = new Array(tasks.length)
  let next = 0
  async function worker (): Promise<void> {
    while (next < tasks.length) {
      const i = next++
      try {
        results[i] = { status: 'fulfilled', value: await tasks[i]!() }
      } catch (reason) {
        results[i] = { status: 'rejected', reason }
      }
    }
  }
  const workers = atOnce <= 0 ? tasks.length : Math.min(atOnce, tasks.length)
  await Promise.all(Array.from({ length: workers }, worker))
  return results
}
