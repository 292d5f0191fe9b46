import { json, message } from './answer.ts'
import type { Answer } from './answer.ts'
import type { OperationContext } from './context.ts'
import { day } from './dates.ts'
import type { CargoOwnerContainer } from './records.ts'

// Handlers of the SP2 operations (docs/hub.md#operations).

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const cache = new WeakMap<object, string>()

/** The SP2 documents of one cargo owner's BL; unknown combinations give []. */
export function hostToHost ({ values, dataset }: OperationContext): Answer {
  const documents = dataset.sp2ForBl(values.npwp ?? '', values.blNo ?? '', day(values.blDate) ?? '')
  // The benchmark lists are up to 1.4 MB; serialize each list once.
  let text = cache.get(documents)
  if (text === undefined && documents.length > 50) {
    text = JSON.stringify(documents)
    cache.set(documents, text)
  }
  return text === undefined
    ? json(200, documents)
    : { kind: 'json', status: 200, body: documents, text }
}

/**
 * The cargo-owner container lookup: the matching containers of the owner's SP2 documents, each with
 * its document id.
 */
export function cargoOwnerContainers ({ values, dataset }: OperationContext): Answer {
  const documents = dataset.sp2ForBl(values.npwp ?? '', values.blNo ?? '', day(values.blDate) ?? '')
  const found: CargoOwnerContainer[] = []
  for (const doc of documents) {
    for (const container of doc.container) {
      if (container.container_no === values.containerNo) {
        found.push({ ...container, id_document_sp2: doc.id_document_sp2 })
      }
    }
  }
  return json(200, found)
}

/**
 * Finalizing (payload and answer not documented): our choice is a JSON body
 * `{"id_document_sp2": "<uuid>"}`; a variant that names the document in its
 * address takes it from there (and a body naming another is refused). The
 * sandbox is stateless, so finalizing does not change later lookups and may
 * be repeated.
 */
export function finalize ({ body, values, dataset }: OperationContext): Answer {
  if (body.kind === 'invalid') return message(400, 'Body harus berupa JSON')
  const value = body.kind === 'json' ? body.value : undefined
  const inBody =
    typeof value === 'object' && value !== null && 'id_document_sp2' in value
      ? value.id_document_sp2
      : undefined
  if (values.sp2Id !== undefined && inBody !== undefined && inBody !== values.sp2Id) {
    return message(400, 'Parameter ' +
    'id_document_sp2 tidak sesuai')
  }
  const id = values.sp2Id ?? inBody
  if (id === undefined || id === null || id === '') {
    return message(400, 'Parameter ' +
    'id_document_sp2 wajib diisi')
  }
  if (typeof id !== 'string' || !UUID.test(id)) {
    return message(400, 'Parameter id_document_sp2 ' +
    'tidak valid')
  }
  const doc = dataset.findSp2(id)
  if (doc === undefined) return message(404, 'Dokumen SP2 tidak ditemukan')
  return json(200, {
    message: 'SP2 document finalized',
    id_document_sp2: doc.id_document_sp2,
    is_finished: 1,
    status: 'Finish'
  })
}
