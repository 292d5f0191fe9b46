// The ten container-list lookups of docs/hub.md#operations, as data: parameters in
// the table's order and the key each one answers under.
export interface ContainerOperationSpec {
  name: string
  params: ReadonlyArray<'noBl' | 'tglBl'>
  key: string
}

export const CONTAINER_OPERATIONS = [
  { name: 'kontainersp3b', params: ['noBl', 'tglBl'], key: 'Data Kontainer SP3B' },
  // The description leaves kontainerbc20's key open (docs/hub.md#open-points); we answer
  // under the lowercase pattern most of its siblings use.
  { name: 'kontainerbc20', params: ['tglBl'], key: 'data kontainer bc 20' },
  { name: 'kontainerbc261', params: ['noBl'], key: 'data kontainer bc 261' },
  { name: 'kontainerbc262', params: ['noBl'], key: 'data kontainer bc 262' },
  { name: 'kontainerbc28', params: ['noBl'], key: 'data kontainer bc 28' },
  { name: 'kontainerPPFTZ', params: ['noBl', 'tglBl'], key: 'Data Kontainer PPFTZ' },
  { name: 'kontainerbc25', params: ['tglBl'], key: 'data kontainer bc 25' },
  // docs/hub.md#operations: bc23 really answers under 'Data Kontainer BC16' and
  // bc30 under 'Data Kontainer SP3B', bc27 under 'data status impor'.
  { name: 'kontainerbc23', params: ['noBl', 'tglBl'], key: 'Data Kontainer BC16' },
  { name: 'kontainerbc30', params: ['noBl', 'tglBl'], key: 'Data Kontainer SP3B' },
  { name: 'kontainerbc27', params: ['tglBl'], key: 'data status impor' }
] as const satisfies readonly ContainerOperationSpec[]

export type ContainerOperationName = typeof CONTAINER_OPERATIONS[number]['name']
