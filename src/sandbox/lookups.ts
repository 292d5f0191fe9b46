import { json, message } from './answer.ts'
import type { Answer } from './answer.ts'
import type { ContainerOperationName, ContainerOperationSpec } from './container-operations.ts'
import type { OperationContext } from './context.ts'
import { compactDate, stampedBlDate } from './dates.ts'
import type { Taxpayer } from './data.ts'

// Handlers of the {hub_url}/V1/<SEG>/INT/AUTH lookups (docs/hub.md#operations).

const NOT_FOUND = 'Data tidak ditemukan'

/** 4.6: BL list of one document type; an unknown NPWP has an empty list. */
export function blList (type: 'bc16' | 'bc20' | 'bc23', key: string) {
  return ({ params, dataset }: OperationContext): Answer => {
    const taxpayer: Taxpayer | undefined = dataset.taxpayers.find((t) => t.npwp === params.npwp)
    const entries = (taxpayer?.[type] ?? []).map((bl) => ({ bl_no: bl.blNo, bl_date: stampedBlDate(bl.blNo, bl.blDate) }))
    return json(200, { [key]: entries })
  }
}

/** 4.7: containers filtered by whichever of noBl / tglBl the operation takes. */
export function containerList (spec: ContainerOperationSpec & { name: ContainerOperationName }) {
  return ({ params, dataset }: OperationContext): Answer => {
    const items = dataset.containerLists[spec.name].filter((item) =>
      (params.noBl === undefined || item.no_bl === params.noBl) &&
      (params.tglBl === undefined || compactDate(item.tgl_bl) === params.tglBl))
    return json(200, { [spec.key]: items })
  }
}

/** 4.4: one declaration; 404 when the NPWP has no such PIB. */
export function bc20ByNoPib ({ params, dataset }: OperationContext): Answer {
  const record = dataset.declarations.find((d) => d.npwp_cargoowner === params.npwp && d.no_pib === params.nopib)
  return record === undefined ? message(404, NOT_FOUND) : json(200, record)
}

/** 4.5 (parameters and response not shown): our choice is `nobl` and an array of 2.8 records. */
export function bc20ByNoBl ({ params, dataset }: OperationContext): Answer {
  return json(200, dataset.declarations.filter((d) => d.host_bl === params.nobl))
}
