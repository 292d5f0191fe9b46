import { OPERATIONS, type Operation, type OperationId } from '../upstream/operations.ts'
import { areaPrefix } from '../upstream/resolve.ts'

export function operation (id: OperationId): Operation {
  const op = (OPERATIONS as readonly Operation[]).find(o => o.id === id)
  if (op === undefined) throw new Error(`unknown operation ${id}`)
  return op
}

/** The route description's second half: which hub call answers it, at default settings. */
export function upstreamDescription (op: Operation): string {
  const address = `${op.method} {${op.service}_url}${areaPrefix(op.area, 'HUB', 'development')}${op.path}`
  const production = op.area === 'lookup' ? '' : ` (production: \`{${op.service}_url}${areaPrefix(op.area, 'HUB', 'production')}${op.path}\`)`
  const headers = op.headers.map(h => h === 'apiKey' ? 'the API key' : 'the access token').join(' and ')
  const params = op.params.length === 0 ? '' : ` Upstream parameters: ${op.params.map(p => `\`${p.name}\` → \`${p.upstream}\``).join(', ')}.`
  return `Upstream: the hub's \`${op.id}\` (interface.md ${op.section}), \`${address}\`${production}, sent with ${headers}.${params}${op.note === undefined ? '' : ` ${op.note}`}`
}
