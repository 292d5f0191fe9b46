// A small seeded generator (FNV-1a hash of a string seed feeding mulberry32).
// Every generated entity gets its own seed string, so its data does not depend
// on what was generated before it, and lazily generated data stays stable.
export interface Rng {
  /** A float in [0, 1). */
  next (): number
  /** An integer in [min, max], both included. */
  int (min: number, max: number): number
  pick<T> (items: readonly T[]): T
  chance (probability: number): boolean
  /** A string of count decimal digits (leading zeros allowed). */
  digits (count: number): string
  /** A lowercase hexadecimal string of count characters. */
  hex (count: number): string
}

function hash (text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

export function createRng (seed: string): Rng {
  let state = hash(seed)
  const next = (): number => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (min: number, max: number): number => min + Math.floor(next() * (max - min + 1))
  const pick = <T>(items: readonly T[]): T => {
    const item = items[int(0, items.length - 1)]
    if (item === undefined) throw new Error('pick from an empty list')
    return item
  }
  const fromAlphabet = (alphabet: string, count: number): string => {
    let out = ''
    for (let i = 0; i < count; i++) out += alphabet.charAt(int(0, alphabet.length - 1))
    return out
  }
  return {
    next,
    int,
    pick,
    chance: (probability) => next() < probability,
    digits: (count) => fromAlphabet('0123456789', count),
    hex: (count) => fromAlphabet('0123456789abcdef', count)
  }
}

/** A random (version 4 layout) UUID drawn from rng. */
export function uuidFrom (rng: Rng): string {
  const variant = rng.pick(['8', '9', 'a', 'b'])
  return `${rng.hex(8)}-${rng.hex(4)}-4${rng.hex(3)}-${variant}${rng.hex(3)}-${rng.hex(12)}`
}
