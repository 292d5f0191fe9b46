import neostandard from 'neostandard'

export default [
  ...neostandard({ ts: true, ignores: ['**/dist/**', 'coverage/**', '.tap/**', 'openapi/**', 'clients/typescript/src/openapi.ts'] }),
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
      }]
    }
  }
]
