import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['**/dist/**', 'coverage/**', '.tap/**', 'openapi/**', 'clients/typescript/src/openapi.ts'] }),
  {
    // A line a reviewer reads without scrolling. A regular expression literal cannot be broken
    // across lines, and an address is read whole.
    files: [
      'src/**/*.ts', 'test/**/*.ts', 'scripts/**/*.{ts,mjs}', 'bench/**/*.ts'
    ],
    rules: {
      '@stylistic/max-len': ['error', { code: 100, ignoreUrls: true, ignoreRegExpLiterals: true }]
    }
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error', {
        // Routes are typed from their schemas by the TypeBox type provider; a cast would hide a schema and a handler that disagree.
        selector: "TSAsExpression[expression.object.name='request'][expression.property.name=/^(params|query|body|headers)$/]",
        message: 'Type the route from its schemas (withTypeProvider<TypeBoxTypeProvider>()) rather than casting the request'
      }, {
        selector: "TSAsExpression[expression.object.object.name='request'][expression.object.property.name=/^(params|query|body|headers)$/]",
        message: 'Type the route from its schemas (withTypeProvider<TypeBoxTypeProvider>()) rather than casting the request'
      }, {
        // A duck-typed cast reads a field whatever made the error; the guards of src/errors.ts read only what an error of that kind carries.
        selector: 'TSAsExpression[expression.type="Identifier"][expression.name=/^(error|err|reason|cause|failure)$/]',
        message: 'Read an error through its type (isGatewayError, upstreamStatusOf, codeOf in src/errors.ts), not a cast'
      }]
    }
  }
]
