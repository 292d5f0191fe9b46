/** The hub answered a value that does not fit docs/hub.md; `path` names it. */
export class ShapeError extends Error {
  path: string
  readonly expected: string
  constructor (path: string, expected: string) {
    super(`${path}: expected ${expected}`)
    this.name = 'ShapeError'
    this.path = path
    this.expected = expected
  }

  /** The path is built on the way out of a failure, never on the way in of a success. */
  within (prefix: string): ShapeError {
    this.path =
      this.path === ''
        ? prefix
        : this.path.startsWith('[')
          ? `${prefix}${this.path}`
          : `${prefix}.${this.path}`
    this.message = `${this.path}: expected ${this.expected}`
    return this
  }
}

/** `error` with its path prefixed, when it is a ShapeError. */
export function located (error: unknown, prefix: string): unknown {
  return error instanceof ShapeError ? error.within(prefix) : error
}
