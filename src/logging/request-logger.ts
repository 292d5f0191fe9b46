import type { FastifyBaseLogger } from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'pino'
import type { LevelWithSilentOrString } from 'pino'

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'

/** What the request loggers are made from: pino's logger (it has `isLevelEnabled`). */
type ParentLogger = FastifyBaseLogger & {
  isLevelEnabled?: (level: LevelWithSilentOrString) => boolean
}

/**
 * A request's logger that becomes pino's child logger (the one binding the
 * request id) only when something logs at a level in force, or asks for a
 * child of its own (tracing binds the trace ids that way). Fastify makes a
 * child per request; pino's costs about a microsecond (it serialises the
 * bindings at once), which most requests, logging nothing at the level in
 * force, never use. Lines and redaction are pino's, unchanged.
 */
export class RequestLogger implements FastifyBaseLogger {
  readonly #parent: ParentLogger
  readonly #bindings: Bindings
  #child: FastifyBaseLogger | undefined

  constructor (parent: ParentLogger, bindings: Bindings) {
    this.#parent = parent
    this.#bindings = bindings
  }

  #real (): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings)
    return this.#child
  }

  #write (level: Level, args: unknown[]): void {
    if (this.#child === undefined && this.#parent.isLevelEnabled?.(level) === false) return
    const logger = this.#real()
    ;(logger[level] as (...args: unknown[]) => void)(...args)
  }

  get level (): string {
    return (this.#child ?? this.#parent).level
  }

  set level (level: string) {
    this.#real().level = level
  }

  fatal (...args: unknown[]): void { this.#write('fatal', args) }
  error (...args: unknown[]): void { this.#write('error', args) }
  warn (...args: unknown[]): void { this.#write('warn', args) }
  info (...args: unknown[]): void { this.#write('info', args) }
  debug (...args: unknown[]): void { this.#write('debug', args) }
  trace (...args: unknown[]): void { this.#write('trace', args) }
  silent (): void {}

  child (bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options)
  }
}

/**
 * Fastify's `childLoggerFactory`: a RequestLogger, or pino's child at once when the route sets
 * its own level or serializers.
 */
export function requestLoggerFactory (
  logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions
): FastifyBaseLogger {
  if (options.level !== undefined || options.serializers !== undefined) {
    return logger.child(bindings, options)
  }
  return new RequestLogger(logger, bindings)
}
