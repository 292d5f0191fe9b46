// The one import site for TypeBox's schema builder and types.
export { Type } from 'typebox'
export type { Static, TSchema, TObject, TProperties, TString } from 'typebox'
// Types only: routes are typed from their schemas; validation stays with the app's Ajv compiler.
export type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
