// The container case: the gateway as deploy/kubernetes/ runs it, with the
// heap Node gives itself under the Deployment's memory limit and the
// ConfigMap's settings, read from the manifests each run so that the case
// follows them.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parse } from 'yaml'
import type { CaseName } from './options.ts'

/** The cases the container runs, at the throughput runs' connections. */
export const CONTAINER_CASES: readonly CaseName[] = ['bl', 'sp2-500']
/** Where the manifests limit the gateway's memory, and the limit the heap flags below are for. */
const DEPLOYMENT = 'deploy/kubernetes/base/deployment.yaml'
const CONFIGMAP = 'deploy/kubernetes/base/configmap.yaml'
const MEMORY_LIMIT = '512Mi'
/**
 * The heap Node 24 sizes for itself under a 512 MiB cgroup limit: V8 takes
 * the limit as the machine's memory, an old space of half of it and a
 * semi-space of 1 MiB (heap_size_limit 259 MiB). These flags give the same
 * limits without a cgroup (read back with v8.getHeapStatistics() and
 * v8.getHeapSpaceStatistics() against a process under the limit); a bare
 * --max-old-space-size=256 would keep the default 64 MiB semi-spaces. A size
 * the ConfigMap's NODE_OPTIONS sets is V8's in the container, so the flag
 * emulating V8's own choice of it is left out.
 */
const HEAP_FLAGS = ['--max-old-space-size=256', '--max-semi-space-size=1']

export interface ContainerSetup {
  /** The ConfigMap's settings the container gateway gets (METRICS_PORT: the bench's free port). */
  env: Record<string, string>
  /** The ConfigMap's settings left out, with why. */
  leftOut: string
  memoryLimit: string
  heapFlags: string[]
  /** PRESSURE_MAX_RSS_BYTES of the ConfigMap, MiB: above it the gateway sheds load. */
  shedLineMb: number | undefined
}

interface Deployment {
  spec?: { template?: { spec?: { containers?: Array<{ name?: string, resources?: unknown }> } } }
}

/** The container case's settings, from the manifests under `root`. */
export async function containerSetup (root: string, metricsPort: number): Promise<ContainerSetup> {
  const deployment = parse(await readFile(join(root, DEPLOYMENT), 'utf8')) as Deployment
  const containers = deployment.spec?.template?.spec?.containers ?? []
  const gateway = containers.find(c => c.name === 'gateway') ?? containers[0]
  const limits = (gateway?.resources as { limits?: { memory?: unknown } } | undefined)?.limits
  if (limits?.memory !== MEMORY_LIMIT) {
    throw new Error(`${DEPLOYMENT} limits the gateway's memory to ${String(limits?.memory)}, ` +
      `and bench/container.ts has Node's heap sizes for ${MEMORY_LIMIT} only: measure what ` +
      'Node picks under the new limit and update HEAP_FLAGS and MEMORY_LIMIT, or --no-container')
  }
  const configMap = parse(await readFile(join(root, CONFIGMAP), 'utf8')) as { data?: unknown }
  const data = Object.entries((configMap.data ?? {}) as Record<string, unknown>)
  // UPSTREAM_*: the hub's address and description; the bench's upstream takes the hub's place.
  const kept = data.filter(([name]) => !name.startsWith('UPSTREAM_'))
  const env = Object.fromEntries(kept.map(([name, value]) => [name, String(value)]))
  if ('METRICS_PORT' in env) env.METRICS_PORT = String(metricsPort)
  const rss = Number(env.PRESSURE_MAX_RSS_BYTES)
  const left = data.filter(([name]) => name.startsWith('UPSTREAM_')).map(([name]) => `\`${name}\``)
  const why = '(the hub\'s; the bench\'s upstream is the hub)'
  return {
    env,
    leftOut: left.length > 0 ? `${left.join(', ')} ${why}` : '',
    memoryLimit: MEMORY_LIMIT,
    heapFlags: HEAP_FLAGS.filter(flag => !setIn(env.NODE_OPTIONS ?? '', flag)),
    shedLineMb: Number.isFinite(rss) && rss > 0 ? rss / 1024 / 1024 : undefined
  }
}

/** True when `options` (NODE_OPTIONS) sets the option `flag` gives a value. */
function setIn (options: string, flag: string): boolean {
  const name = flag.split('=')[0]
  return options.split(/\s+/).some(option => option.split('=')[0] === name)
}
