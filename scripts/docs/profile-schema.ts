import { HubProfileSchema } from '../../src/profile/schema.ts'

/**
 * deploy/profiles/profile.schema.json: the hub profile's schema
 * (src/profile/schema.ts) as JSON Schema 2020-12, for editors, for the
 * sandbox and for anyone checking a profile without the gateway. Generated
 * by `npm run openapi`; test/profile/profiles.test.ts fails when the committed file
 * differs.
 */
export const PROFILE_SCHEMA_PATH = 'deploy/profiles/profile.schema.json'

export function renderProfileSchema (): string {
  // Through JSON: TypeBox's schema objects carry symbol keys, which JSON leaves out.
  const schema = JSON.parse(JSON.stringify(HubProfileSchema)) as Record<string, unknown>
  return (
    JSON.stringify(
      {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        $id: 'profile.schema.json',
        ...schema
      },
      null,
      2
    ) + '\n'
  )
}
