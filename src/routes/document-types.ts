import type { OperationId } from '../upstream/operations.ts'

/**
 * The customs document types the routes are made of, each with the hub
 * operation behind it: one container route per type (contract.md 3), and
 * the BL lists, whose items the taxpayer route tags with their type.
 */

/** The container routes: `/v1/customs/{type}/containers`. */
export const CONTAINER_ROUTES = [
  { type: 'bc20', label: 'BC 2.0', operation: 'kontainerbc20' },
  { type: 'bc23', label: 'BC 2.3', operation: 'kontainerbc23' },
  { type: 'bc25', label: 'BC 2.5', operation: 'kontainerbc25' },
  { type: 'bc261', label: 'BC 2.6.1', operation: 'kontainerbc261' },
  { type: 'bc262', label: 'BC 2.6.2', operation: 'kontainerbc262' },
  { type: 'bc27', label: 'BC 2.7', operation: 'kontainerbc27' },
  { type: 'bc28', label: 'BC 2.8', operation: 'kontainerbc28' },
  { type: 'bc30', label: 'BC 3.0', operation: 'kontainerbc30' },
  { type: 'sp3b', label: 'SP3B', operation: 'kontainersp3b' },
  { type: 'ppftz', label: 'PPFTZ', operation: 'kontainerPPFTZ' }
] as const satisfies ReadonlyArray<{ type: string, label: string, operation: OperationId }>

/** The BL list routes (`/v1/customs/{type}/bills-of-lading`) and the document type each item is tagged with. */
export const BL_LIST_ROUTES = [
  { type: 'bc16', label: 'BC 1.6', operation: 'noblbc16' },
  { type: 'bc20', label: 'BC 2.0', operation: 'noblbc20' },
  { type: 'bc23', label: 'BC 2.3', operation: 'noblbc23' }
] as const satisfies ReadonlyArray<{ type: string, label: string, operation: OperationId }>
