import fp from 'fastify-plugin'
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  RouteOptions
} from 'fastify'
import { gatewayError } from '../errors.ts'
import { addRouteHook } from './route-hooks.ts'

/**
 * Levels of nested objects and arrays a request body may have; the gateway's own bodies have one.
 */
export const MAX_BODY_DEPTH = 32

const RULE = `must be nested at most ${MAX_BODY_DEPTH} levels deep`

/**
 * How deep `value` nests objects and arrays, counted up to `limit + 1` at most (without recursion).
 */
export function nestingDepth (value: unknown, limit: number): number {
  let deepest = 0
  const stack: Array<[unknown, number]> = [[value, 1]]
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [node, depth] = top
    if (node === null || typeof node !== 'object') continue
    if (depth > deepest) deepest = depth
    if (deepest > limit) return deepest
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1])
    }
  }
  return deepest
}

function checkDepth (
  request: FastifyRequest,
  _reply: FastifyReply,
  done: HookHandlerDoneFunction
): void {
  if (
    request.body !== null &&
    typeof request.body === 'object' &&
    nestingDepth(request.body, MAX_BODY_DEPTH) > MAX_BODY_DEPTH
  ) {
    done(
      gatewayError(
        'VALIDATION_FAILED',
        { details: [{ field: 'body', rule: RULE }] },
        `body ${RULE}`
      )
    )
    return
  }
  done()
}

/**
 * A depth limit for every request body, before validation: JSON.parse reads
 * any depth, but what walks a body afterwards (the schema validator, the
 * idempotency fingerprint) should never meet one 5,000 levels deep. Only the
 * routes that take a body get the hook.
 */
async function bodyDepth (app: FastifyInstance) {
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = [route.method].flat()
    if (methods.every((method) => method === 'GET' || method === 'HEAD' || method === 'OPTIONS')) {
      return
    }
    addRouteHook(route, 'preValidation', checkDepth)
  })
}

export default fp(bodyDepth, { name: 'body-depth' })
