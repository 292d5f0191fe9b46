import { oas } from '@stoplight/spectral-rulesets'

/**
 * The Spectral ruleset of the OpenAPI document (openapi/openapi.json): the
 * `spectral:oas` rules, zero errors and zero warnings, with two rules turned
 * off where they do not apply. test/repo/openapi.test.ts runs it.
 */
export default {
  extends: [oas],
  rules: {
    // OpenAPI 3.1 lets a requirement of a non-OAuth scheme list the roles it
    // needs ("For other security scheme types, the array MAY contain a list
    // of role names", 3.1.0 section 4.8.30): each route names its scope
    // (customs:read, ...) beside bearerAuth. The rule still applies the 3.0
    // reading, in which only OAuth flows may declare scopes.
    'oas3-operation-security-defined': 'off'
  },
  overrides: [
    {
      // GET /v1/events is a WebSocket: its success is 101 Switching Protocols,
      // which no 2xx or 3xx can stand for.
      files: ['openapi/openapi.json#/paths/~1v1~1events'],
      rules: { 'operation-success-response': 'off' }
    }
  ]
}
