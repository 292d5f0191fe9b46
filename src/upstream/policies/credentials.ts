/**
 * The hub's authorization for a call: the current token, and on a 401 one
 * new token (a login, a rotated file) and one more try.
 */
import type { FastifyBaseLogger } from 'fastify'
import { upstreamStatusOf } from '../../errors.ts'
import type { Caller, HubCredentials } from '../call.ts'
import type { ResolvedOperation } from '../resolve-operations.ts'

export async function withAuthorization<T> (
  credentials: HubCredentials,
  op: ResolvedOperation,
  caller: Caller,
  log: FastifyBaseLogger,
  attempt: (authorization: string) => Promise<T>
): Promise<T> {
  const authorization = op.sendsToken ? await credentials.authorization(caller) : ''
  try {
    return await attempt(authorization)
  } catch (error) {
    const status = upstreamStatusOf(error)
    if (status !== 401 || authorization === '' || !(await credentials.refresh(authorization))) throw error
    log.info({ operation: op.id }, 'hub refused the token: retrying once with a new one')
    return attempt(await credentials.authorization(caller))
  }
}
