import { readFileSync, statSync } from 'node:fs'
import { join, resolve } from 'node:path'
import fastJsonPatch, { type Operation } from 'fast-json-patch'
import { parse, parseAllDocuments } from 'yaml'

/**
 * Renders a Kustomize directory the way `kustomize build` would, for the
 * fields deploy/kubernetes uses and no others: `resources` (files and
 * directories), `patches` (JSON 6902, by kind and name), `namespace` and
 * `images`. Any other field is an error rather than something silently left
 * out: a kustomization that grows a feature grows it here too, or its test
 * fails. No kustomize binary is needed (none is packaged for npm or Debian).
 */

export interface KubeObject {
  apiVersion: string
  kind: string
  metadata: {
    name: string
    namespace?: string
    labels?: Record<string, string>
    [key: string]: unknown
  }
  [key: string]: unknown
}

interface Kustomization {
  apiVersion?: string
  kind?: string
  resources?: string[]
  namespace?: string
  images?: Array<{ name: string, newName?: string, newTag?: string, digest?: string }>
  patches?: Array<{ path?: string, patch?: string, target?: { kind?: string, name?: string } }>
}

const FIELDS = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'images', 'patches'])
/** Kinds without a namespace, among those a gateway deployment may hold. */
const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'PriorityClass',
  'StorageClass',
  'IngressClass'
])

/** Kubernetes reads manifests as YAML 1.1 (sigs.k8s.io/yaml): `0440` is octal there. */
export function readYaml (file: string): unknown {
  return parse(readFileSync(file, 'utf8'), { version: '1.1', strict: true, uniqueKeys: true })
}

export function readManifests (file: string): KubeObject[] {
  const objects: KubeObject[] = []
  for (const document of parseAllDocuments(readFileSync(file, 'utf8'), {
    version: '1.1',
    strict: true,
    uniqueKeys: true
  })) {
    if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]?.message}`)
    const value = document.toJS() as KubeObject | null
    if (value !== null) objects.push(value)
  }
  return objects
}

export function render (dir: string): KubeObject[] {
  const file = join(dir, 'kustomization.yaml')
  const k = readYaml(file) as Kustomization
  for (const field of Object.keys(k)) {
    if (!FIELDS.has(field)) {
      throw new Error(`${file}: ${field} is not rendered by ` +
      'test/deploy/kustomize.ts')
    }
  }
  if (k.apiVersion !== 'kustomize.config.k8s.io/v1beta1' || k.kind !== 'Kustomization') {
    throw new Error(`${file}: ` + 'not a kustomize.config.k8s.io/v1beta1 Kustomization')
  }

  const objects: KubeObject[] = []
  for (const entry of k.resources ?? []) {
    const path = resolve(dir, entry)
    objects.push(...(statSync(path).isDirectory() ? render(path) : readManifests(path)))
  }
  // kustomize's order: patches, then the namespace, then images.
  for (const patch of k.patches ?? []) {
    const text =
      patch.path !== undefined
        ? readFileSync(resolve(dir, patch.path), 'utf8')
        : (patch.patch ?? '')
    const operations = parse(text, { version: '1.1', strict: true }) as unknown
    if (!Array.isArray(operations)) {
      throw new Error(`${file}: only JSON 6902 patches (a list ` +
      'of operations) are rendered')
    }
    const { kind, name, ...other } = patch.target ?? {}
    if (Object.keys(other).length > 0 || kind === undefined || name === undefined) {
      throw new Error(`${file}: ` + 'a patch\'s target is a kind and a name here')
    }
    const targets = objects.filter(o => o.kind === kind && o.metadata.name === name)
    if (targets.length === 0) {
      throw new Error(`${file}: the patch ${patch.path ?? ''} matches ` +
      `no ${kind} ${name}`)
    }
    for (const target of targets) {
      fastJsonPatch.applyPatch(target, operations as Operation[], true, true)
    }
  }
  if (k.namespace !== undefined) {
    for (const o of objects) if (!CLUSTER_SCOPED.has(o.kind)) o.metadata.namespace = k.namespace
  }
  for (const image of k.images ?? []) {
    for (const container of containersOf(objects)) {
      const { name, suffix } = splitImage(String(container.image))
      if (name !== image.name) continue
      const newSuffix =
        image.digest !== undefined
          ? `@${image.digest}`
          : image.newTag !== undefined
            ? `:${image.newTag}`
            : suffix
      container.image = `${image.newName ?? name}${newSuffix}`
    }
  }
  return objects
}

/** An image reference's name, and its `:tag` or `@digest`. */
function splitImage (image: string): { name: string, suffix: string } {
  const at = image.indexOf('@')
  if (at !== -1) return { name: image.slice(0, at), suffix: image.slice(at) }
  const colon = image.lastIndexOf(':')
  if (colon > image.lastIndexOf('/')) {
    return { name: image.slice(0, colon), suffix: image.slice(colon) }
  }
  return { name: image, suffix: '' }
}

/** The containers and init containers of every workload's pod template. */
export function containersOf (objects: KubeObject[]): Array<Record<string, unknown>> {
  return objects.flatMap(o => {
    const spec = (
      o.spec as
        { template?: { spec?: { containers?: unknown[]; initContainers?: unknown[] } } } | undefined
    )?.template?.spec
    return [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])] as Array<
      Record<string, unknown>
    >
  })
}
