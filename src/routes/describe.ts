import { OPERATIONS, type Operation, type OperationId } from '../upstream/operations.ts'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The hub operations the route calls. Not in the public document (it
     * speaks to web developers); docs/hub-operations.md, for operators, is
     * generated from it.
     */
    hubOperations?: readonly OperationId[]
  }
}

export function operation (id: OperationId): Operation {
  const op = (OPERATIONS as readonly Operation[]).find(o => o.id === id)
  if (op === undefined) throw new Error(`unknown operation ${id}`)
  return op
}
