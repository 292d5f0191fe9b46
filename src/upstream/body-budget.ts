import { gatewayError } from '../errors.ts'

export interface ByteBudget {
  /**
   * Waits until `bytes` fit in the budget (in arrival order), then takes
   * them; the returned function gives them back (once). Rejects with
   * UPSTREAM_TIMEOUT if `signal` aborts first.
   */
  acquire (bytes: number, signal: AbortSignal): Promise<() => void>
  /** Bytes taken now, and bytes waiting. */
  readonly used: number
  readonly waiting: number
}

/**
 * A budget of bytes shared by the large hub bodies being read or waiting for
 * their turn to be decoded. A body waits for its declared size before the
 * gateway reads it; meanwhile it stays in the socket, and TCP's flow control
 * holds the hub back, instead of the gateway's memory growing with the queue
 * (100 SP2 lists of 1.3 MB waiting to be decoded held over 200 MB).
 *
 * First come, first served: a large body is not passed by smaller ones. A
 * body larger than the whole budget waits until nothing else holds any.
 *
 * Written here: the weighted semaphores on npm (async-mutex) cannot withdraw
 * one waiter when its deadline passes, and a caller must get its 504 then,
 * not when the bytes come free.
 */
export function byteBudget (limit: number): ByteBudget {
  let used = 0
  let waitingBytes = 0
  const queue: Array<{ bytes: number, grant: () => void }> = []

  function admit (): void {
    for (;;) {
      const head = queue[0]
      if (head === undefined || (used > 0 && used + head.bytes > limit)) return
      queue.shift()
      waitingBytes -= head.bytes
      head.grant()
    }
  }

  function take (bytes: number): () => void {
    used += bytes
    let given = false
    return () => {
      if (given) return
      given = true
      used -= bytes
      admit()
    }
  }

  return {
    get used () { return used },
    get waiting () { return waitingBytes },
    acquire (bytes, signal) {
      if (signal.aborted) return Promise.reject(gatewayError('UPSTREAM_TIMEOUT'))
      if (queue.length === 0 && (used === 0 || used + bytes <= limit)) {
        return Promise.resolve(take(bytes))
      }
      return new Promise((resolve, reject) => {
        const waiter = {
          bytes,
          grant: () => {
            signal.removeEventListener('abort', onAbort)
            resolve(take(bytes))
          }
        }
        function onAbort (): void {
          const at = queue.indexOf(waiter)
          if (at === -1) return
          queue.splice(at, 1)
          waitingBytes -= bytes
          reject(gatewayError('UPSTREAM_TIMEOUT'))
          // The waiter at the head may fit now that this one is gone.
          admit()
        }
        queue.push(waiter)
        waitingBytes += bytes
        signal.addEventListener('abort', onAbort, { once: true })
      })
    }
  }
}
