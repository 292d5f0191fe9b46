import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['**/dist/**', 'coverage/**', '.tap/**', 'openapi/**', 'clients/typescript/src/openapi.ts'] })
]
