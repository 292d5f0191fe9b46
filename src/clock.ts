/**
 * The time, in milliseconds since the epoch. Whatever keeps time for TTLs,
 * windows or renewal takes one, so that a test can move it instead of
 * waiting for it.
 */
export type Clock = () => number

export const systemClock: Clock = () => Date.now()
