// The one import site for TypeBox (style.md: schemas and docs).
export { Type } from 'typebox'
export type { Static, TSchema, TObject, TProperties, TString } from 'typebox'
