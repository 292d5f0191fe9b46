// Stage `breaker`: the call itself, no circuit (each reported closed, for readiness).
import type { Breakers } from '../../../src/upstream/policies/breaker.ts'
import type { OperationMap } from '../../../src/upstream/resolve-operations.ts'

export function createBreakers (operations: OperationMap): Breakers {
  const circuits = [...operations.values()].map(op => ({ upstream: op.service, operation: op.id, state: 'closed' as const }))
  return { run: (_op, action) => action(), state: () => 'closed', circuits: () => circuits, shutdown () {} }
}
