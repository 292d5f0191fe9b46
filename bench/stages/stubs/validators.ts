// Stage `validation`: every request part valid as it came (a validator of the
// empty schema, which accepts anything); the rest of the module as it is.
import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler'
import { originalOf } from '../original.ts'

const original = (await import(
  originalOf('schemas/validators.js')
)) as typeof import('../../../src/schemas/validators.ts')

export const REQUEST_AJV_OPTIONS = original.REQUEST_AJV_OPTIONS

export function requestValidatorFactory (): BuildCompilerFromPool {
  const pool = AjvCompiler()
  return (externalSchemas, options = {}) => {
    const anything = pool(
      externalSchemas,
      options
    )({ schema: {}, method: 'GET', url: '/', httpPart: 'querystring' })
    return () => anything
  }
}
