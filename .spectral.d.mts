// The type of .spectral.mjs, for the test that runs it (test/repo/openapi.test.ts).
import type { RulesetDefinition } from '@stoplight/spectral-core'

declare const ruleset: RulesetDefinition
export default ruleset
