import { gatewayError } from '../errors.ts'
import { isStateUnavailable } from '../state/types.ts'
import type { IdempotencyClaim, StoredResponse } from '../state/types.ts'

/**
 * retry-after of IDEMPOTENCY_UNAVAILABLE: the shared store (Redis) is
 * reconnected to at most every 2 s and checked every second (state/redis/connection.ts).
 */
export const UNAVAILABLE_RETRY_AFTER = '2'

/**
 * Where a write stands with the hub:
 *
 * - `claimed`: nothing sent yet (with an Idempotency-Key, the request holds its key);
 * - `sending`: the hub call may have started; never sent again with this key;
 * - `answered`: the hub answered 2xx;
 * - `failed-before-send`: the call failed in a way that shows the hub did not act
 *   (no connection, a 4xx);
 * - `unknown`: the call failed once the hub may have acted (a timeout, a 5xx);
 * - `replayed`: answered from the store, without a hub call.
 */
export type WritePhase =
  'claimed' | 'sending' | 'answered' | 'failed-before-send' | 'unknown' | 'replayed'

/** Phases after which the hub may have acted: the key is never sent again. */
const MAY_HAVE_ACTED = new Set<WritePhase>(['sending', 'answered', 'unknown'])

/**
 * One request of a write route, from the idempotency plugin, which creates it
 * (holding the key's claim when the request has an Idempotency-Key), to the
 * write route, which advances it around its one hub call:
 *
 *     claimed --(the call failed before its request left)--> claimed: the key is freed
 *     claimed --sending()--> sending --answered()--> answered
 *                                    --failed(false)--> failed-before-send
 *                                    --failed(true)---> unknown
 *
 * The plugin then settles the key by where it ended (settle()): a 2xx is kept,
 * a write the hub may have acted on without one is kept as unknown, and any
 * other frees the key. The audit line and the metrics read `replayed`.
 */
export class WriteAttempt {
  #phase: WritePhase
  readonly #claim: IdempotencyClaim | undefined
  #settled = false

  constructor (claim?: IdempotencyClaim, phase: 'claimed' | 'replayed' = 'claimed') {
    this.#claim = claim
    this.#phase = phase
  }

  /** A write answered from the store. */
  static replayed (): WriteAttempt {
    return new WriteAttempt(undefined, 'replayed')
  }

  get phase (): WritePhase { return this.#phase }
  get replayed (): boolean { return this.#phase === 'replayed' }

  /**
   * claimed -> sending, the last thing before the request leaves for the hub
   * (the write route gives it to the call path as CallInput.beforeSend): with a
   * key, the store records it first; when it cannot, the write is refused (503
   * IDEMPOTENCY_UNAVAILABLE) and nothing is sent.
   */
  async sending (): Promise<void> {
    if (this.#phase !== 'claimed') throw new Error(`a write cannot be sent from ${this.#phase}`)
    try {
      await this.#claim?.sending()
    } catch (error) {
      if (!isStateUnavailable(error)) throw error
      const retryAfter = UNAVAILABLE_RETRY_AFTER
      throw gatewayError('IDEMPOTENCY_UNAVAILABLE', { retryAfter, cause: error })
    }
    this.#phase = 'sending'
  }

  /** sending -> answered: the hub answered 2xx. */
  answered (): void {
    if (this.#phase === 'sending') this.#phase = 'answered'
  }

  /** sending -> unknown or failed-before-send, by whether the hub may have acted. */
  failed (hubMayHaveActed: boolean): void {
    if (this.#phase === 'sending') this.#phase = hubMayHaveActed ? 'unknown' : 'failed-before-send'
  }

  /** Whether the hub may have acted on the write. */
  get mayHaveReachedHub (): boolean { return MAY_HAVE_ACTED.has(this.#phase) }

  /** Whether the key has been settled (or there is none). */
  get settled (): boolean { return this.#claim === undefined || this.#settled }

  /**
   * Settles the key once, by the answer given: a 2xx (`answer`) is kept; a
   * write the hub may have acted on without one leaves the key unknown; any
   * other frees it.
   */
  async settle (answer: StoredResponse | undefined): Promise<void> {
    if (this.settled) return
    this.#settled = true
    if (answer !== undefined) await this.#claim?.complete(answer)
    else if (this.mayHaveReachedHub) await this.#claim?.abandon()
    else await this.#claim?.release()
  }
}
