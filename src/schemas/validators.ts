import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler'
import type { FastifyServerOptions } from 'fastify'
import { REQUEST_FORMATS, requestFormats } from './formats.ts'

/**
 * Fastify's `ajv` option for the request schemas: unknown fields are refused
 * rather than dropped, every problem is reported rather than the first
 * (allErrors; the error handler keeps at most 20), and each ajv error keeps
 * the schema it broke (verbose), from which the error handler words the rule.
 * allErrors costs more on a hostile request only in proportion to its size,
 * which the 64 KiB body limit and the URL limits bound. The gateway's formats
 * are added once the compiler has added ajv-formats (`onCreate`), so that
 * its own `uuid` and `date-time` replace the standard ones.
 */
export const REQUEST_AJV_OPTIONS = {
  customOptions: { removeAdditional: false, allErrors: true, verbose: true },
  onCreate: requestFormats
} satisfies FastifyServerOptions['ajv']

/**
 * Fastify's own ajv compiler, twice: query strings, path parameters and
 * headers are text and keep Fastify's conversion of text to the schema's type;
 * JSON bodies are validated as sent, without coercion, so that `"15"`,
 * `true` or `[7]` is never taken for a price of 15, 1 or 7 (docs/api.md#input-rules).
 * This is the per-part set-up Fastify's documentation shows, on its own
 * @fastify/ajv-compiler so that shared schemas (`$ref`) still resolve. One
 * factory per server, as Fastify makes its own.
 */
export function requestValidatorFactory (): BuildCompilerFromPool {
  const pool = AjvCompiler()
  return (externalSchemas, options = {}) => {
    const convert = pool(externalSchemas, {
      ...options,
      mode: undefined,
      customOptions: { ...options.customOptions, coerceTypes: 'array' }
    })
    const exact = pool(externalSchemas, {
      ...options,
      mode: undefined,
      customOptions: { ...options.customOptions, coerceTypes: false }
    })
    // Declared as taking a schema; Fastify calls it with its route definition ({ schema, method,
    // url, httpPart }).
    return (route) => {
      const { schema, method, url, httpPart } = route as {
        schema: unknown
        method?: string
        url?: string
        httpPart?: string
      }
      const loose = unformattedText(schema, httpPart ?? 'request')
      if (loose.length > 0) {
        throw new Error(
          `${String(method)} ${String(url)}: ${loose.join(', ')} must name a format of ` +
          'src/schemas/formats.ts, so that the text rule holds (control and format characters ' +
          'refused)'
        )
      }
      return (httpPart === 'body' ? exact : convert)(route)
    }
  }
}

/**
 * Where a request schema takes text without a format of the gateway's (and
 * so without the text rule): a route with a free `Type.String()` would let
 * control characters through to the hub, so such a route does not start.
 * A string that must equal one of a list (`enum`, `const`) is no free text.
 */
export function unformattedText (schema: unknown, where: string): string[] {
  if (schema === null || typeof schema !== 'object') return []
  const node = schema as Record<string, unknown>
  const found: string[] = []
  const types = Array.isArray(node.type) ? node.type : [node.type]
  if (
    types.includes('string') &&
    node.enum === undefined &&
    node.const === undefined &&
    !(typeof node.format === 'string' && REQUEST_FORMATS.has(node.format))
  ) { found.push(where) }
  for (const [name, child] of Object.entries((node.properties ?? {}) as Record<string, unknown>)) {
    found.push(...unformattedText(child, `${where}.${name}`))
  }
  for (const key of ['items', 'additionalProperties', 'patternProperties', 'not'] as const) {
    const child = node[key]
    if (key === 'patternProperties') {
      for (const inner of Object.values((child ?? {}) as Record<string, unknown>)) {
        found.push(...unformattedText(inner, `${where}.*`))
      }
    } else found.push(...unformattedText(child, key === 'items' ? `${where}[]` : `${where}.*`))
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    for (const child of (Array.isArray(node[key]) ? node[key] : []) as unknown[]) {
      found.push(...unformattedText(child, where))
    }
  }
  return found
}
