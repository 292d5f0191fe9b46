export { SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_PLATFORM_ID } from './constants.ts'
export { SANDBOX_FIXTURES } from './data.ts'
export type { BlFixture, ContainerListFixture, SandboxFixtures, TaxpayerFixture } from './data.ts'
export { FAULTS, magicValue } from './faults.ts'
export { sandboxEnv, sandboxProfile } from './gateway-env.ts'
export type { FaultName, MagicForm } from './faults.ts'
export { ProfileError } from './profile-file.ts'
export { startSandbox } from './server.ts'
export type { RecordedRequest, Sandbox, SandboxOptions, SandboxRequestLog } from './types.ts'
export {
  SANDBOX_LOGIN_PATH,
  SANDBOX_PASSWORD,
  SANDBOX_REFRESH_PATH,
  SANDBOX_USERNAME
} from './tokens.ts'
