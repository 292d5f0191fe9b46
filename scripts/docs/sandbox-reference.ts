import { DEFAULT_API_KEY_HEADER } from '../../src/sandbox/constants.ts'
import { createDataset } from '../../src/sandbox/data.ts'
import { MAGIC_FORMS } from '../../src/sandbox/faults.ts'
import {
  FAULTS, magicValue, SANDBOX_ACCESS_TOKEN, SANDBOX_API_KEY, SANDBOX_FIXTURES,
  SANDBOX_LOGIN_PATH, SANDBOX_PASSWORD, SANDBOX_PLATFORM_ID, SANDBOX_REFRESH_PATH,
  SANDBOX_USERNAME
} from '../../src/sandbox/index.ts'
import { code, generatedNote, table } from './markdown.ts'

/**
 * docs/reference/sandbox.md: the sandbox hub's credentials, its magic values (faults on
 * demand) and its seeded data, from the sandbox's own tables (src/sandbox/: faults.ts,
 * data.ts, constants.ts). Written by `npm run openapi`; a test fails when the committed page
 * differs.
 */

export const SANDBOX_REFERENCE_PATH = 'docs/reference/sandbox.md'

/** `a`, `b` and `c` as code spans. */
function codes (values: readonly string[]): string {
  return values.map(code).join(', ')
}

/** Rows grouped under a key, in the order the keys first appear. */
function grouped<T> (items: readonly T[], key: (item: T) => string): Array<[string, T[]]> {
  const groups = new Map<string, T[]>()
  for (const item of items) groups.set(key(item), [...groups.get(key(item)) ?? [], item])
  return [...groups]
}

function credentials (): string[] {
  return [
    '## Credentials',
    '',
    table(['What', 'Value'], [
      [`API key (header ${code(DEFAULT_API_KEY_HEADER)})`, code(SANDBOX_API_KEY)],
      ['Access token (`Authorization`, as it is)', code(SANDBOX_ACCESS_TOKEN)],
      ['Platform id (an offer\'s `idPlatform`)', code(SANDBOX_PLATFORM_ID)],
      ['Login account', `${code(SANDBOX_USERNAME)}, ${code(SANDBOX_PASSWORD)}`],
      ['Login and renewal (without a profile that names others)',
        `POST ${code(SANDBOX_LOGIN_PATH)}, POST ${code(SANDBOX_REFRESH_PATH)}`]
    ]),
    ''
  ]
}

function magicValues (): string[] {
  const container = SANDBOX_FIXTURES.containers.kontainerbc261
  return [
    '## Magic values',
    '',
    'A request misbehaves when one of its values is a magic value: a path segment, any query ' +
      'parameter (listed or not), any string of its JSON body. The first one found wins ' +
      '(path, then query, then body). The address and the credentials are checked first, so ' +
      'an unknown address stays a 404 and a wrong key a 401; an unknown name or code is an ' +
      'ordinary value. `magicValue(name, form)` (`src/sandbox/index.ts`) builds one.',
    '',
    table(['Form', 'Shape', 'Fits', 'Example (503)'],
      MAGIC_FORMS.map(f => [f.form, f.shape, f.fits, code(magicValue('503', f.form))])),
    '',
    table(['Name', 'Code', 'Text, NPWP', 'What the sandbox answers'], FAULTS.map(f => [
      code(f.name), code(f.code),
      `${code(magicValue(f.name, 'text'))}, ${code(magicValue(f.name, 'npwp'))}`, f.does
    ])),
    '',
    'The "normal body" is what the request would have got without the fault: to fault a ' +
      'real answer, add the magic value as an extra query parameter, e.g. ' +
      `${code(`/V1/HUB/INT/AUTH/kontainerbc261/?noBl=${container.noBl}&probe=SBX-DRIFT`)}.`,
    ''
  ]
}

function seededData (): string[] {
  const data = createDataset()
  const bls = (list: ReadonlyArray<{ blNo: string, blDate: string }>) =>
    list.length === 0 ? 'none' : list.map(bl => `${code(bl.blNo)} (${bl.blDate})`).join(', ')
  const taxpayers = data.taxpayers.map(t =>
    [code(t.npwp), t.name, bls(t.bc16), bls(t.bc20), bls(t.bc23)])
  const declarations = grouped(data.declarations, d => d.host_bl).map(([bl, list]) =>
    [code(list[0]!.npwp_cargoowner), code(bl), codes(list.map(d => d.no_pib))])
  const containers = Object.entries(data.containerLists).flatMap(([operation, items]) =>
    grouped(items, item => `${item.no_bl} ${item.tgl_bl}`).map(([, list]) => [
      code(operation), code(list[0]!.no_bl), code(list[0]!.tgl_bl.replaceAll('-', '')),
      codes(list.map(item => item.no_kontainer))
    ]))
  const documents = data.sp2Documents.map(doc => [
    code(doc.td_document.npwp_cargo_owner), code(doc.td_document.bl_no),
    code(doc.td_document.bl_date.replaceAll('-', '')), code(doc.id_document_sp2), doc.status,
    codes(doc.container.map(c => c.container_no))
  ])
  const { benchmark: bench } = SANDBOX_FIXTURES
  const unknown = SANDBOX_FIXTURES
  return [
    '## Seeded data',
    '',
    'Made from fixed seeds (FNV-1a and mulberry32, no `Math.random`): every sandbox serves the ' +
      'same bytes. `SANDBOX_FIXTURES` (`src/sandbox/index.ts`) names the values the tests ' +
      `use: ${codes(Object.keys(SANDBOX_FIXTURES))}.`,
    '',
    '### Taxpayers and their bills of lading',
    '',
    'The BL lists (`noblbc16`, `noblbc20`, `noblbc23`) answer these; an unknown taxpayer, an ' +
      'empty list. The last two are for load tests: their host-to-host lookup answers ' +
      `${bench.twenty.documents} and ${bench.fiveHundred.documents} SP2 documents, made on ` +
      'first use.',
    '',
    table(['NPWP', 'Name', 'BC 1.6', 'BC 2.0', 'BC 2.3'], taxpayers),
    '',
    '### BC 2.0 declarations',
    '',
    'Each BC 2.0 bill of lading of the ordinary taxpayers has one (two for the first). ' +
      '`BC20ByNoPib` takes the taxpayer and a PIB number, `BC20ByNoBL` the BL.',
    '',
    table(['NPWP', 'BL', 'PIB numbers'], declarations),
    '',
    '### Container lists',
    '',
    'Send the parameters the operation takes (its hub names: `noBl`, `tglBl`); a lookup ' +
      'that takes only the date answers every container of that date. An unknown BL or date ' +
      'answers an empty list.',
    '',
    table(['Operation', 'noBl', 'tglBl', 'Containers'], containers),
    '',
    '### SP2 documents',
    '',
    'The host-to-host lookup takes the taxpayer, the BL and its date; the cargo-owner ' +
      'container lookup takes one of the containers besides. The finalization takes a ' +
      'document\'s id.',
    '',
    table(['NPWP', 'BL', 'bl_date', 'Document', 'Status', 'Containers'], documents),
    '',
    '### Booking requests, and values it knows nothing of',
    '',
    table(['What', 'Values'], [
      ['Booking requests (offers, booked notifications)', codes(data.bookingRequestIds)],
      ['Unknown taxpayer, BL, PIB number', codes([unknown.unknownNpwp, unknown.unknownBlNo,
        unknown.unknownPibNo])],
      ['Unknown SP2 id, booking request', codes([unknown.unknownSp2Id,
        unknown.unknownBookingRequestId])]
    ]),
    ''
  ]
}

/** The Markdown of docs/reference/sandbox.md. Deterministic: the same seeds, the same page. */
export function renderSandboxReference (): string {
  return [
    '# Sandbox hub values',
    '',
    generatedNote('the sandbox\'s tables (src/sandbox/faults.ts, data.ts, constants.ts)'),
    '',
    'The values to try on the sandbox hub, and the magic values that make it fail on demand. ' +
      'How to start it and what it plays: [hub.md](../hub.md#the-sandbox).',
    '',
    ...credentials(),
    ...magicValues(),
    ...seededData()
  ].join('\n')
}
