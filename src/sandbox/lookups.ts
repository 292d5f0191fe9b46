import { json, message } from './answer.ts'
import type { Answer } from './answer.ts'
import type { ContainerOperationName, ContainerOperationSpec } from './container-operations.ts'
import type { OperationContext } from './context.ts'
import { day, stampedBlDate } from './dates.ts'
import type { Taxpayer } from './data.ts'

// Handlers of the {hub_url}/V1/<SEG>/INT/AUTH lookups (docs/hub.md#operations).

const NOT_FOUND = 'Data tidak ditemukan'

/** The BL list of one document type; an unknown NPWP has an empty list. */
export function blList (type: 'bc16' | 'bc20' | 'bc23', key: string) {
  return ({ values, dataset }: OperationContext): Answer => {
    const taxpayer: Taxpayer | undefined = dataset.taxpayers.find((t) => t.npwp === values.npwp)
    const entries = (taxpayer?.[type] ?? []).map((bl) => ({
      bl_no: bl.blNo,
      bl_date: stampedBlDate(bl.blNo, bl.blDate)
    }))
    return json(200, { [key]: entries })
  }
}

/** The containers, filtered by whichever of the BL number and date the operation takes. */
export function containerList (spec: ContainerOperationSpec & { name: ContainerOperationName }) {
  return ({ values, dataset }: OperationContext): Answer => {
    const blDate = day(values.blDate)
    const items = dataset.containerLists[spec.name].filter((item) =>
      (values.blNo === undefined || item.no_bl === values.blNo) &&
      (blDate === undefined || item.tgl_bl === blDate))
    return json(200, { [spec.key]: items })
  }
}

/** One declaration (BC 2.0 by PIB); 404 when the NPWP has no such PIB. */
export function bc20ByNoPib ({ values, dataset }: OperationContext): Answer {
  const record = dataset.declarations.find(
    (d) => d.npwp_cargoowner === values.npwp && d.no_pib === values.pibNo
  )
  return record === undefined ? message(404, NOT_FOUND) : json(200, record)
}

/**
 * The BC 2.0 lookup by BL (parameters and answer not documented): our choice
 * is `nobl` and an array of declaration records; a variant that also takes
 * the taxpayer and the BL date narrows the list by them.
 */
export function bc20ByNoBl ({ values, dataset }: OperationContext): Answer {
  const blDate = day(values.blDate)
  return json(200, dataset.declarations.filter((d) => d.host_bl === values.blNo &&
    (values.npwp === undefined || d.npwp_cargoowner === values.npwp) &&
    (blDate === undefined || d.tgl_bl.slice(0, 10) === blDate)))
}
