// The call-path stages (catalogue.ts, `steps`): the gateway's own
// createHubClient, given its call path with the variant's steps taken out or
// replaced (createHubClient's `callPath`, call-path.ts); nothing else changed.
import { withStepsSwapped } from '../call-path.ts'
import { stepsOf } from '../catalogue.ts'
import { originalOf } from '../original.ts'
import type { HubClient, HubClientOptions } from '../../../src/upstream/client.ts'

const original = await import(originalOf('upstream/client.js')) as
  typeof import('../../../src/upstream/client.ts')
const names = stepsOf(process.env.BENCH_STAGE_VARIANT ?? 'full')

export const { policyOptions } = original

export function createHubClient (options: HubClientOptions): HubClient {
  return original.createHubClient({ ...options, callPath: steps => withStepsSwapped(steps, names) })
}
