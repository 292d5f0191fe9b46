import { ERROR_TABLE, type ErrorEntry } from '../../src/errors.ts'
import { ErrorEnvelopeSchema } from '../../src/schemas/envelope.ts'
import { code, generatedNote, table } from './markdown.ts'

/**
 * docs/reference/errors.md: every error code, its statuses, its message and
 * when it is answered, from the error table (src/errors.ts), and the
 * envelope's fields from its schema. Written by `npm run openapi`; a test
 * fails when the committed page differs.
 */

export const ERRORS_REFERENCE_PATH = 'docs/reference/errors.md'

function statuses (entry: ErrorEntry): string {
  return [entry.status, ...entry.also ?? []].join(', ')
}

/** The Markdown of docs/reference/errors.md. */
export function renderErrorsReference (): string {
  const required = new Set<string>(ErrorEnvelopeSchema.required ?? [])
  const fields = Object.keys(ErrorEnvelopeSchema.properties)
  const always = fields.filter(name => required.has(name)).map(code).join(', ')
  const sometimes = fields.filter(name => !required.has(name)).map(code).join(', ')
  const entries: Array<[string, ErrorEntry]> = Object.entries(ERROR_TABLE)
  const rows = entries.map(([name, entry]) => [
    code(name),
    statuses(entry),
    entry.message.replaceAll('%s', '…'),
    entry.when
  ])
  return [
    '# Error codes',
    '',
    generatedNote('the error table (src/errors.ts)'),
    '',
    `Every error answer is one JSON envelope: ${always}; ${sometimes} where they apply. ` +
      'Programs act on `code`; `…` in a message is filled in where the error is made. ' +
      'Which routes answer which codes: [routes.md](routes.md).',
    '',
    table(['Code', 'Status', 'Message', 'When'], rows),
    ''
  ].join('\n')
}
