/**
 * The hub's authorization for a call: the current token, and on a 401 one
 * new token (a login, a rotated file) and one more try.
 */
import { upstreamStatusOf } from '../../errors.ts'
import type { HubCredentials } from '../call.ts'
import type { Policy } from '../call-path.ts'

export function credentialsPolicy (credentials: HubCredentials): Policy {
  return (next) => async (ctx) => {
    const { op, caller } = ctx
    const authorization = op.sendsToken ? await credentials.authorization(caller) : ''
    ctx.authorization = authorization
    try {
      return await next(ctx)
    } catch (error) {
      const status = upstreamStatusOf(error)
      if (status !== 401 || authorization === '' || !(await credentials.refresh(authorization))) {
        throw error
      }
      ctx.log.info({ operation: op.id }, 'hub refused the token: retrying once with a new one')
      ctx.authorization = await credentials.authorization(caller)
      return await next(ctx)
    }
  }
}
