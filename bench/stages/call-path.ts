// The call-path stages of `npm run bench -- --stages` (catalogue.ts, `steps`):
// what each step of the hub client's call path becomes when its stage is
// taken out. Given to the gateway's own createHubClient as its `callPath`
// (stubs/client.ts): entries of the list swapped, no module of the gateway
// replaced. Types only from src/: at run time the gateway is dist/.
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Fetched } from '../../src/upstream/answer.ts'
import type { CallContext, CallStep, Policy, ReadAnswer } from '../../src/upstream/call-path.ts'

/** A step taken out: the call goes straight on. */
const ABSENT = undefined

/** Within setTimeout's range (2^31 - 1 ms): the exchange's timer is set to it. */
const FAR = { at: Date.now() + 2_000_000_000, signal: new AbortController().signal }

/** `deadline`: one deadline for every call, never passing in a run, its signal never aborting. */
function constantDeadline (): Policy {
  return (next) => (ctx) => {
    ctx.deadline = FAR
    return next(ctx)
  }
}

/** `credentials`: the token the first call got (the bench's static one), no refresh. */
function firstToken (original: Policy): Policy {
  return (next) => {
    let token: string | undefined
    const first = original((ctx) => {
      token = ctx.authorization
      return next(ctx)
    })
    return (ctx) => {
      if (!ctx.op.sendsToken) return next(ctx)
      if (token === undefined) return first(ctx)
      ctx.authorization = token
      return next(ctx)
    }
  }
}

/** `cache`: the hub call's answer, nothing kept, no coalescing. */
function uncached (): Policy {
  const answer = async (next: (ctx: CallContext) => Promise<Fetched>, ctx: CallContext) => {
    const fetched = await next(ctx)
    ctx.cache = { cached: false, stale: false, ageSeconds: 0, ttlSeconds: ctx.op.cacheTtlSeconds }
    return fetched
  }
  return (next) => (ctx) => ctx.op.method === 'GET' ? answer(next, ctx) : next(ctx)
}

/**
 * `exchange`: no HTTP exchange with the hub; the body the bench's upstream
 * would send (BENCH_STAGE_BODIES: the files by path fragment) is read from
 * memory, as one chunk, after the same latency (BENCH_STAGE_LATENCY_MS).
 */
function fromMemory (): Policy {
  const files = JSON.parse(process.env.BENCH_STAGE_BODIES ?? '{}') as Record<string, string>
  const bodies = Object.entries(files)
    .map(([fragment, file]) => [fragment, readFileSync(file)] as const)
  const latencyMs = Number(process.env.BENCH_STAGE_LATENCY_MS ?? '20')
  return () => async (ctx) => {
    const body = bodies.find(([fragment]) => ctx.path.includes(fragment))?.[1]
    if (body === undefined) throw new Error(`no bench body for ${ctx.path}`)
    await sleep(latencyMs)
    return await ctx.read([body], body.length, 200, ctx)
  }
}

/**
 * `decode`: the first answer of each operation and size is decoded as the
 * gateway does; later ones are a copy of it (one allocation and memcpy of
 * the envelope, which the transcoder makes too).
 */
function copyOfFirst (original: Policy): Policy {
  const first = new Map<string, Fetched>()
  let decode: ReadAnswer | undefined
  const copy: ReadAnswer = (chunks, size, statusCode, ctx) => {
    const key = `${ctx.op.id} ${size}`
    const known = first.get(key)
    if (known === undefined) {
      const fetched = decode!(chunks, size, statusCode, ctx)
      if (fetched instanceof Promise) return fetched.then((f) => { first.set(key, f); return f })
      first.set(key, fetched)
      return fetched
    }
    const body = Buffer.from(known.body)
    const at = known.json.byteOffset - known.body.byteOffset
    const json = body.subarray(at, at + known.json.length)
    return { json, count: known.count, upstreamStatus: statusCode, body, cached: false }
  }
  return (next) => original((ctx) => {
    decode ??= ctx.read
    ctx.read = copy
    return next(ctx)
  })
}

/** What each step becomes with its stage taken out (ABSENT: nothing). */
const INSTEAD: Record<string, (original: Policy) => Policy | undefined> = {
  breaker: () => ABSENT,
  deadline: constantDeadline,
  retry: () => ABSENT,
  credentials: firstToken,
  'call-span': () => ABSENT,
  'attempt-span': () => ABSENT,
  cache: uncached,
  exchange: fromMemory,
  decode: copyOfFirst
}

/** The call path with the steps named taken out or replaced; every name must be a step of it. */
export function withStepsSwapped (
  steps: readonly CallStep[], names: readonly string[]
): CallStep[] {
  for (const name of names) {
    if (INSTEAD[name] === undefined || !steps.some(step => step.name === name)) {
      throw new Error(`the call path has no step ${name} the bench can swap`)
    }
  }
  return steps.flatMap((step) => {
    if (!names.includes(step.name)) return [step]
    const policy = INSTEAD[step.name]!(step.policy)
    return policy === ABSENT ? [] : [{ name: step.name, policy }]
  })
}
