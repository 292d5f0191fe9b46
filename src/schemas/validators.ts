import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler'
import type { FastifyServerOptions } from 'fastify'
import { requestFormats } from './formats.ts'

/**
 * Fastify's `ajv` option for the request schemas: unknown fields are refused
 * rather than dropped, every problem is reported rather than the first
 * (allErrors; the error handler keeps at most 20), and each ajv error keeps
 * the schema it broke (verbose), from which the error handler words the rule.
 * allErrors costs more on a hostile request only in proportion to its size,
 * which the 64 KiB body limit and the URL limits bound.
 */
export const REQUEST_AJV_OPTIONS = {
  customOptions: { removeAdditional: false, allErrors: true, verbose: true },
  plugins: [requestFormats]
} satisfies FastifyServerOptions['ajv']

/**
 * Fastify's own ajv compiler, twice: query strings, path parameters and
 * headers are text and keep Fastify's conversion of text to the schema's type;
 * JSON bodies are validated as sent, without coercion, so that `"15"`,
 * `true` or `[7]` is never taken for a price of 15, 1 or 7 (contract.md 6).
 * This is the per-part set-up Fastify's documentation shows, on its own
 * @fastify/ajv-compiler so that shared schemas (`$ref`) still resolve. One
 * factory per server, as Fastify makes its own.
 */
export function requestValidatorFactory (): BuildCompilerFromPool {
  const pool = AjvCompiler()
  return (externalSchemas, options = {}) => {
    const convert = pool(externalSchemas, { ...options, mode: undefined, customOptions: { ...options.customOptions, coerceTypes: 'array' } })
    const exact = pool(externalSchemas, { ...options, mode: undefined, customOptions: { ...options.customOptions, coerceTypes: false } })
    // Declared as taking a schema; Fastify calls it with its route definition ({ schema, method, url, httpPart }).
    return (route) => (typeof route === 'object' && route.httpPart === 'body' ? exact : convert)(route)
  }
}
