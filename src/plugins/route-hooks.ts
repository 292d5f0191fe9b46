import type { RouteOptions } from 'fastify'

type HookName = 'onRequest' | 'preValidation' | 'preHandler' | 'onSend' | 'onResponse' | 'onError'

/**
 * Adds a hook to one route from an `onRoute` hook, after the route's own:
 * plugins whose work concerns a few routes (the writes) hook those routes
 * only, instead of adding a global hook that every lookup would run to find
 * out it has nothing to do.
 */
export function addRouteHook (
  route: RouteOptions,
  name: HookName,
  hook: (...args: any[]) => unknown
): void {
  const existing = route[name] as unknown
  route[name] = (
    existing === undefined
      ? [hook]
      : Array.isArray(existing)
        ? [...existing, hook]
        : [existing, hook]
  ) as never
}
