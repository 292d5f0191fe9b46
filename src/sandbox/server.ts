import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { JSON_TYPE, message, serialize } from './answer.ts'
import type { Answer } from './answer.ts'
import { nonNegative, resolveOptions } from './config.ts'
import type { RequestBody } from './context.ts'
import { createDataset } from './data.ts'
import { defaultModel } from './default-model.ts'
import { decide } from './dispatch.ts'
import { authDecision, authOperation } from './login.ts'
import { loginOf, readProfile } from './profile-file.ts'
import { profileModel } from './profile-model.ts'
import { createRng } from './prng.ts'
import type { RecordedRequest, Sandbox, SandboxOptions } from './types.ts'

// The sandbox hub on plain node:http: faults such as a reset, a hang or a
// truncated body need direct control of the socket.

const BODY_LIMIT = 1024 * 1024

interface ReadBody {
  text: string
  tooLarge: boolean
}

function readBody (req: IncomingMessage): Promise<ReadBody> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size <= BODY_LIMIT) chunks.push(chunk)
    })
    req.on('end', () =>
      resolve({ text: Buffer.concat(chunks).toString('utf8'), tooLarge: size > BODY_LIMIT })
    )
    // An aborted upload leaves nothing to answer (send() skips dead sockets);
    // resolving keeps the request from lingering.
    const abandon = (): void => resolve({ text: '', tooLarge: false })
    req.on('error', abandon)
    req.on('close', abandon)
  })
}

function parseBody (text: string): RequestBody {
  if (text.trim() === '') return { kind: 'none' }
  try {
    return { kind: 'json', value: JSON.parse(text) }
  } catch {
    return { kind: 'invalid', text }
  }
}

function splitUrl (url: string): { path: string, query: URLSearchParams } {
  const hash = url.indexOf('#')
  const bare = hash >= 0 ? url.slice(0, hash) : url
  const mark = bare.indexOf('?')
  return mark >= 0
    ? { path: bare.slice(0, mark), query: new URLSearchParams(bare.slice(mark + 1)) }
    : { path: bare, query: new URLSearchParams() }
}

function firstValues (query: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of query) if (!(name in out)) out[name] = value
  return out
}

function send (res: ServerResponse, answer: Answer): void {
  if (res.destroyed || res.writableEnded) return
  switch (answer.kind) {
    case 'hang':
      return
    case 'reset':
      res.socket?.resetAndDestroy()
      return
    case 'truncated': {
      const bytes = Buffer.from(answer.text)
      res.writeHead(answer.status, {
        'content-type': answer.contentType,
        'content-length': bytes.length
      })
      // Half the announced bytes, then end the connection.
      res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => res.socket?.end())
      return
    }
    case 'raw':
    case 'json': {
      const text = answer.kind === 'json' ? serialize(answer) : answer.text
      const contentType = answer.kind === 'json' ? JSON_TYPE : answer.contentType
      const headers = answer.kind === 'json' ? answer.headers : undefined
      res.writeHead(answer.status, {
        ...headers,
        'content-type': contentType,
        'content-length': Buffer.byteLength(text)
      })
      res.end(text)
    }
  }
}

function urlOf (host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`
}

export async function startSandbox (options?: SandboxOptions): Promise<Sandbox> {
  const profile = options?.profile === undefined ? undefined : await readProfile(options.profile)
  // A profile's login picks the form and addresses of the sandbox's login; options given say
  // otherwise.
  const config = resolveOptions(
    profile === undefined ? options : { ...loginOf(profile), ...options },
    profile !== undefined
  )
  const model = profile === undefined ? defaultModel(config) : profileModel(profile, config)
  const dataset = createDataset(config.pathSegment)
  // The newest requests (a ring: the oldest is dropped once full) and counts of all of them.
  const requests: RecordedRequest[] = []
  const counts = new Map<string, number>()
  let total = 0
  const record = (request: RecordedRequest): void => {
    total++
    counts.set(request.operation, (counts.get(request.operation) ?? 0) + 1)
    if (config.recordLimit === 0) return
    // shift() on a packed array is a cheap left trim in V8, not a copy.
    if (requests.length >= config.recordLimit) requests.shift()
    requests.push(request)
  }
  const sockets = new Set<Socket>()
  const timers = new Set<NodeJS.Timeout>()
  const jitter = createRng('sandbox-latency')

  const delayFor = (extra: number): number => {
    const spread = config.jitterMs === 0 ? 0 : (jitter.next() * 2 - 1) * config.jitterMs
    return Math.max(0, Math.round(config.latencyMs + spread + extra))
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const at = Date.now()
    res.on('error', () => {}) // a client that went away is not the sandbox's problem
    const { path, query } = splitUrl(req.url ?? '/')
    const read = await readBody(req)
    const body = parseBody(read.text)
    // The modelled login and its renewal (login.ts): operations 'login' and 'refresh' in the
    // record.
    const auth = authOperation(path, config)
    let decision =
      auth !== undefined
        ? authDecision(auth, req.method ?? 'GET', req.headers, body, config)
        : decide(
          {
            method: req.method ?? 'GET',
            path,
            query,
            headers: req.headers,
            body,
            tooLarge: read.tooLarge
          },
          config,
          dataset,
          model
        )
    if (read.tooLarge && auth !== undefined) {
      decision = { ...decision, answer: message(413, 'Payload Too Large'), extraDelayMs: 0 }
    }

    record({
      operation: decision.operation,
      method: req.method ?? 'GET',
      path,
      query: firstValues(query),
      params: decision.params,
      values: decision.values,
      headers: { ...req.headers },
      body: body.kind === 'json' ? body.value : body.kind === 'invalid' ? body.text : undefined,
      at
    })

    const delay = delayFor(decision.extraDelayMs)
    options?.onRequest?.({
      method: req.method ?? 'GET',
      path,
      operation: decision.operation,
      fault: decision.fault,
      status:
        decision.answer.kind === 'hang' || decision.answer.kind === 'reset'
          ? decision.answer.kind
          : decision.answer.status,
      delayMs: delay
    })
    if (delay === 0) {
      send(res, decision.answer)
      return
    }
    const timer = setTimeout(() => {
      timers.delete(timer)
      send(res, decision.answer)
    }, delay)
    timers.add(timer)
  }

  const server = createServer((req, res) => { handle(req, res).catch(() => res.destroy()) })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(config.port, config.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const address = server.address()
  if (address === null || typeof address === 'string') {
    throw new Error('sandbox is not ' +
    'listening on TCP')
  }

  let closing: Promise<void> | undefined
  return {
    get fault () { return config.fault },
    set fault (name) { config.fault = name },
    get latencyMs () { return config.latencyMs },
    set latencyMs (ms) { config.latencyMs = nonNegative(ms, 0, 'latencyMs') },
    setAccessToken: (token) => {
      config.tokens.staticTokens.delete(config.accessToken)
      config.accessToken = token
      config.tokens.staticTokens.add(token)
    },
    expireTokens: () => config.tokens.expireAll(),
    revokeRefreshTokens: () => config.tokens.revokeRefreshTokens(),
    url: urlOf(config.host, address.port),
    ...(profile === undefined ? {} : { profile: profile.name }),
    requests,
    count: (operation) => operation === undefined ? total : counts.get(operation) ?? 0,
    reset: () => {
      requests.length = 0
      counts.clear()
      total = 0
    },
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer)
        timers.clear()
        server.close(() => resolve())
        // Hanging and keep-alive sockets would hold close() open forever.
        for (const socket of sockets) socket.destroy()
      })
      return closing
    }
  }
}
