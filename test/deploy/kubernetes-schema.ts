import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import type { KubeObject } from './kustomize.ts'

/**
 * Kubernetes API schemas, from the kubernetes-models package (generated from
 * Kubernetes' OpenAPI document, 1.36): each object is validated by its
 * model's JSON schema, then type-checked against its model's interface.
 * The schema checks types, formats (quantities, int-or-string), enums and
 * required fields, but allows fields it does not know, as the API server
 * does without strict field validation; TypeScript's excess-property check
 * refuses those, at any depth, as `kubectl apply` does (a misspelt
 * `readynessProbe` would otherwise pass and be dropped by the cluster).
 */

interface Model { validate (): void }
type ModelClass = new (data: unknown) => Model

/** `apps/v1` + `Deployment` → `kubernetes-models/apps/v1/Deployment` (core kinds: `v1/Service`). */
function modelPath (object: KubeObject): string {
  return `kubernetes-models/${object.apiVersion}/${object.kind}`
}

function describe (object: KubeObject): string {
  return `${object.kind}/${object.metadata?.name ?? '?'}`
}

export async function schemaProblems (objects: KubeObject[]): Promise<string[]> {
  const problems: string[] = []
  for (const object of objects) {
    let Class: ModelClass | undefined
    try {
      const module = await import(modelPath(object)) as Record<string, ModelClass>
      Class = module[object.kind]
    } catch {}
    if (Class === undefined) {
      problems.push(
        `${describe(object)}: no Kubernetes schema for apiVersion ${object.apiVersion} kind ` +
        `${object.kind}`
      )
      continue
    }
    try {
      new Class(object).validate()
    } catch (error) {
      problems.push(`${describe(object)}: ${(error as Error).message}`)
    }
  }
  return problems
}

export function unknownFieldProblems (objects: KubeObject[]): string[] {
  // A module beside this file, so that `kubernetes-models` resolves from the repository's
  // node_modules.
  const file = fileURLToPath(new URL('./manifests.virtual.ts', import.meta.url))
  const starts: number[] = []
  let source = ''
  objects.forEach((object, i) => {
    source += `import type { I${object.kind} as T${i} } from '${modelPath(object)}'\n`
  })
  objects.forEach((object, i) => {
    starts.push(source.length)
    source += `export const o${i}: T${i} = ${JSON.stringify(object)}\n`
  })
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext
  }
  const host = ts.createCompilerHost(options)
  const { getSourceFile, fileExists } = host
  host.getSourceFile = (name, language, ...rest) =>
    name === file
      ? ts.createSourceFile(name, source, language)
      : getSourceFile.call(host, name, language, ...rest)
  host.fileExists = name => name === file || fileExists.call(host, name)
  const program = ts.createProgram([file], options, host)
  return ts.getPreEmitDiagnostics(program).map(diagnostic => {
    const at = diagnostic.start ?? 0
    const index =
      diagnostic.file?.fileName === file ? starts.findLastIndex((start) => start <= at) : -1
    const object = objects[index]
    return `${object === undefined ? 'manifests' : describe(object)}: ` +
      `${ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')}`
  })
}
