// Stage `call-wrappers` (with retry.ts and spans.ts): the bench's static token, no refresh.
import type { HubCredentials, Caller } from '../../../src/upstream/call.ts'
import type { ResolvedOperation } from '../../../src/upstream/resolve-operations.ts'

let token: string | undefined

export function withAuthorization<T> (credentials: HubCredentials, op: ResolvedOperation, caller: Caller, _log: unknown, attempt: (authorization: string) => Promise<T>): Promise<T> {
  if (token === undefined && op.sendsToken) {
    // The static token, asked once.
    return credentials.authorization(caller).then((t) => {
      token = t
      return attempt(t)
    })
  }
  return attempt(op.sendsToken ? token! : '')
}
