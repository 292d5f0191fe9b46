// What the sandbox decided to do with a request. Deciding is pure; server.ts
// turns an Answer into bytes on the socket (or into no bytes at all).

export type Answer =
  /** A JSON body; text, when given, is body already serialized (large cached lists). */
  | { kind: 'json', status: number, body: unknown, text?: string, headers?: Record<string, string> }
  /** Arbitrary bytes with a content type: HTML pages, invalid JSON. */
  | { kind: 'raw', status: number, contentType: string, text: string }
  /** Announces the full text in content-length, sends the first half, then ends the socket. */
  | { kind: 'truncated', status: number, contentType: string, text: string }
  /** Destroys the connection without a response. */
  | { kind: 'reset' }
  /** Never answers. */
  | { kind: 'hang' }

export const JSON_TYPE = 'application/json; charset=utf-8'
export const HTML_TYPE = 'text/html; charset=utf-8'

export function json (status: number, body: unknown, headers?: Record<string, string>): Answer {
  return headers === undefined ? { kind: 'json', status, body } : { kind: 'json', status, body, headers }
}

/** The hub's only error shape (docs/hub.md#errors-states-and-limits): `{"message": "..."}`. */
export function message (status: number, text: string, headers?: Record<string, string>): Answer {
  return json(status, { message: text }, headers)
}

export function isSuccess (answer: Answer): answer is Extract<Answer, { kind: 'json' }> {
  return answer.kind === 'json' && answer.status >= 200 && answer.status < 300
}

export function serialize (answer: Extract<Answer, { kind: 'json' }>): string {
  return answer.text ?? JSON.stringify(answer.body)
}
