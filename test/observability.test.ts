import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { test } from 'tap'
import { parse as parseYaml } from 'yaml'
import { request } from 'undici'
import { SANDBOX_FIXTURES as F } from '../src/sandbox/index.ts'
import { startMetricsServer } from '../src/telemetry/metrics-server.ts'
import { build } from './helper.ts'
import { startRedisServer } from './redis/redis-server.ts'

// deploy/prometheus/alerts.yaml and deploy/grafana/gateway.json against the
// gateway: every expression is parsed and type-checked by Prometheus's own
// PromQL grammar and linter (@prometheus-io/codemirror-promql, the editor of
// Prometheus's web UI), and every metric they name is one the gateway's
// /metrics declares, so that a renamed metric or label cannot leave a dead
// alert behind.

// The linter's CommonJS build: its ES build imports files without their extension, which Node refuses.
const require = createRequire(import.meta.url)
interface SyntaxNode { name: string, from: number, to: number, type: { isError: boolean } }
interface Tree { length: number, iterate (spec: { enter (node: SyntaxNode): void }): void }
interface State { update (spec: object): { state: State } }
const { EditorState } = require('@codemirror/state') as { EditorState: { create (config: { doc: string, extensions: unknown }): State } }
const { ensureSyntaxTree, syntaxTree } = require('@codemirror/language') as {
  ensureSyntaxTree (state: State, upto: number, timeout: number): Tree | null
  syntaxTree (state: State): Tree
}
const { PromQLExtension } = require('@prometheus-io/codemirror-promql') as { PromQLExtension: new () => { asExtension (): unknown } }
const { Parser } = require('@prometheus-io/codemirror-promql/dist/cjs/parser/parser.js') as { Parser: new (state: unknown) => { analyze (): void, getDiagnostics (): Array<{ from: number, message: string }> } }
const promql = new PromQLExtension().asExtension()

/**
 * An editor state holding the whole tree of `expr`. Made for an editor, a new
 * state parses for at most 20 ms and leaves the rest for later; on a busy
 * machine that is a part of the expression (the linter once read `sum` as a
 * metric). So the parse is finished here, and a state made that holds it.
 */
function parsed (expr: string): State {
  const state = EditorState.create({ doc: expr, extensions: promql })
  if (ensureSyntaxTree(state, expr.length, 60_000) === null) throw new Error(`PromQL not parsed within a minute: ${expr}`)
  const whole = state.update({}).state
  if (syntaxTree(whole).length !== expr.length) throw new Error(`PromQL parsed in part: ${expr}`)
  return whole
}

/** What is wrong with a PromQL expression (syntax, then types), and the metric names it reads. */
export function checkPromQL (expr: string): { problems: string[], metrics: string[] } {
  const state = parsed(expr)
  const problems: string[] = []
  const metrics: string[] = []
  syntaxTree(state).iterate({
    enter (node) {
      if (node.type.isError) problems.push(`syntax error at ${node.from}: ${JSON.stringify(expr.slice(Math.max(0, node.from - 10), node.from + 10))}`)
      if (node.name === 'Identifier') metrics.push(expr.slice(node.from, node.to))
    }
  })
  const parser = new Parser(state)
  parser.analyze()
  problems.push(...parser.getDiagnostics().map(d => `${d.message} (at ${d.from})`))
  return { problems, metrics }
}

/** Series Prometheus makes itself rather than the gateway. */
const PROMETHEUS_SERIES = new Set(['ALERTS', 'ALERTS_FOR_STATE', 'up'])

/** Every series name the exposition text declares (a histogram's _bucket, _sum and _count). */
function declared (text: string): Set<string> {
  const names = new Set<string>()
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!)
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`)
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(`${name}${suffix}`)
  }
  return names
}

const ALERTS = parseYaml(readFileSync(new URL('../deploy/prometheus/alerts.yaml', import.meta.url), 'utf8')) as unknown
const DASHBOARD = JSON.parse(readFileSync(new URL('../deploy/grafana/gateway.json', import.meta.url), 'utf8')) as {
  panels: Array<{ title: string, targets: Array<{ expr: string }> }>
  annotations: { list: Array<{ expr?: string }> }
}

/** Grafana's variables, as a query would run. */
function withGrafanaVariables (expr: string): string {
  return expr.replaceAll('$__rate_interval', '5m').replaceAll('$job', '.*')
}

const DURATION = /^([0-9]+(ms|s|m|h|d|w|y))+$/
const RULE_KEYS = new Set(['alert', 'record', 'expr', 'for', 'keep_firing_for', 'labels', 'annotations'])

/** The rule file's own structure, as Prometheus's rule loader checks it (rulefmt). */
function ruleFileProblems (file: unknown): string[] {
  const problems: string[] = []
  const groups = (file as { groups?: unknown })?.groups
  if (!Array.isArray(groups) || groups.length === 0) return ['groups: a list of rule groups is required']
  const groupNames = new Set<string>()
  for (const [g, group] of groups.entries()) {
    const { name, rules, ...rest } = group as { name?: unknown, rules?: unknown }
    if (typeof name !== 'string' || name === '') problems.push(`groups[${g}].name: required`)
    else if (groupNames.has(name)) problems.push(`groups[${g}].name: ${name} repeated`)
    else groupNames.add(name)
    for (const key of Object.keys(rest)) if (!['interval', 'limit', 'query_offset', 'labels'].includes(key)) problems.push(`groups[${g}].${key}: unknown field`)
    if (!Array.isArray(rules) || rules.length === 0) problems.push(`groups[${g}].rules: a list of rules is required`)
    for (const [r, rule] of (Array.isArray(rules) ? rules : []).entries()) {
      const at = `groups[${g}].rules[${r}]`
      const fields = rule as Record<string, unknown>
      for (const key of Object.keys(fields)) if (!RULE_KEYS.has(key)) problems.push(`${at}.${key}: unknown field`)
      if ((typeof fields.alert === 'string') === (typeof fields.record === 'string')) problems.push(`${at}: exactly one of alert and record`)
      if (typeof fields.alert === 'string' && !/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(fields.alert)) problems.push(`${at}.alert: not a valid name`)
      if (typeof fields.expr !== 'string' || fields.expr.trim() === '') problems.push(`${at}.expr: required`)
      for (const key of ['for', 'keep_firing_for']) if (fields[key] !== undefined && !DURATION.test(String(fields[key]))) problems.push(`${at}.${key}: not a duration`)
      for (const key of ['labels', 'annotations']) {
        const map = fields[key]
        if (map === undefined) continue
        if (typeof map !== 'object' || map === null || Object.values(map).some(v => typeof v !== 'string')) problems.push(`${at}.${key}: a map of strings`)
        else for (const label of Object.keys(map)) if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(label)) problems.push(`${at}.${key}.${label}: not a valid label name`)
      }
      if (typeof fields.alert === 'string' && typeof (fields.labels as { severity?: unknown } | undefined)?.severity !== 'string') problems.push(`${at}.labels.severity: every alert says how urgent it is`)
    }
  }
  return problems
}

function alertRules (): Array<{ alert: string, expr: string }> {
  return (ALERTS as { groups: Array<{ rules: Array<{ alert: string, expr: string }> }> }).groups.flatMap(group => group.rules)
}

test('the PromQL check finds syntax and type errors (so that a clean result means something)', async (t) => {
  t.same(checkPromQL('sum by (le) (rate(gateway_http_request_duration_seconds_bucket[5m]))'), { problems: [], metrics: ['gateway_http_request_duration_seconds_bucket'] })
  t.match(checkPromQL('rate(gateway_http_requests_total[5m]').problems, [/syntax error/])
  t.match(checkPromQL('gateway_http_requests_total{status_code=}').problems, [/syntax error/])
  t.match(checkPromQL('rate(gateway_http_requests_total)').problems, [/expected type matrix/])
  t.match(checkPromQL('gateway_events_connections and 1').problems, [/set operator/])
  // The whole expression, past what an editor parses at once (3,000 characters, 20 ms).
  const names = Array.from({ length: 200 }, (_, i) => `gateway_series_${i}`)
  const expr = names.join(' + ')
  t.same(checkPromQL(expr), { problems: [], metrics: names }, `every metric of a ${expr.length}-character expression`)
})

test('the alert rules file is valid rule syntax with valid PromQL', async (t) => {
  t.same(ruleFileProblems(ALERTS), [])
  t.same(ruleFileProblems({ groups: [{ name: 'x', rules: [{ alert: 'A', expr: 'up', for: '5 minutes', labels: { severity: 'page' } }, { expr: 'up' }] }] }),
    ['groups[0].rules[0].for: not a duration', 'groups[0].rules[1]: exactly one of alert and record'], 'the structure check finds what it should')
  const rules = alertRules()
  t.same(rules.map(r => r.alert).sort(), ['GatewayCircuitOpen', 'GatewayEventSocketsNearLimit', 'GatewayHubAuthFailed', 'GatewayHubDrift', 'GatewayHubErrorRatio', 'GatewayIdempotencyUnsettled', 'GatewayLatencyHigh', 'GatewayOverloaded', 'GatewayRedisDown'])
  for (const { alert, expr } of rules) t.same(checkPromQL(expr).problems, [], alert)
})

test('the dashboard\'s queries are valid PromQL', async (t) => {
  t.ok(DASHBOARD.panels.length >= 10)
  for (const panel of DASHBOARD.panels) {
    t.ok(panel.targets.length > 0, `${panel.title} has a query`)
    for (const { expr } of panel.targets) t.same(checkPromQL(withGrafanaVariables(expr)).problems, [], `${panel.title}: ${expr}`)
  }
  for (const { expr } of DASHBOARD.annotations.list) if (expr !== undefined) t.same(checkPromQL(expr).problems, [], expr)
})

test('every metric the alerts and the dashboard use is one the gateway exposes (Redis state on)', async (t) => {
  const redis = await startRedisServer(t)
  const { app } = await build(t, { env: { REDIS_URL: redis.url } })
  // A little traffic, so that the exposition is the one of a gateway at work.
  await app.inject({ url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}` })
  const text = (await app.inject({ url: '/metrics' })).body
  const exposed = declared(text)
  const used = new Map<string, string>()
  for (const { alert, expr } of alertRules()) for (const name of checkPromQL(expr).metrics) used.set(name, `alert ${alert}`)
  for (const panel of DASHBOARD.panels) for (const { expr } of panel.targets) for (const name of checkPromQL(withGrafanaVariables(expr)).metrics) used.set(name, `panel ${panel.title}`)
  t.ok(used.size >= 15, `${used.size} metrics used`)
  const missing = [...used].filter(([name]) => !exposed.has(name) && !PROMETHEUS_SERIES.has(name)).map(([name, where]) => `${name} (${where})`)
  t.same(missing, [], 'no metric the gateway does not expose')
  // Labels the rules select on are the gateway's own.
  t.match(text, /gateway_http_requests_total\{method="GET",route="\/v1\/customs\/bc20\/bills-of-lading",status_code="200"\} 1/)
  t.match(text, /gateway_upstream_circuit_state\{upstream="hub",operation="noblbc20",state="open"\} 0/)
})

test('the gateway counts what the dashboard shows: limits per client, replays, cache results, circuits, logins', async (t) => {
  const key = 'cgw_METRICStestKEYmetricsTESTkeyMETRICStest1234'
  const { app } = await build(t, {
    clients: [{ name: 'yard-app', key, scopes: ['customs:read', 'bookings:write'], rateLimit: { max: 4, timeWindow: '1 minute' } }],
    env: { CACHE_TTL_SECONDS: '30', UPSTREAM_CREDENTIALS: 'login', UPSTREAM_ACCESS_TOKEN: '', BREAKER_VOLUME_THRESHOLD: '1' }
  })
  const headers = { authorization: `Bearer ${key}` }
  const lookup = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`
  t.equal((await app.inject({ url: lookup, headers })).statusCode, 200)
  t.equal((await app.inject({ url: lookup, headers })).statusCode, 200, 'from the cache')
  const booked = { method: 'POST' as const, url: '/v1/bookings/BKG-20240301-0001/booked', payload: { booked: true }, headers: { ...headers, 'idempotency-key': 'metrics-1' } }
  t.equal((await app.inject(booked)).statusCode, 200)
  t.equal((await app.inject(booked)).headers['idempotent-replayed'], 'true')
  t.equal((await app.inject({ url: lookup, headers })).statusCode, 429, 'over its limit')
  t.equal((await app.inject({ url: '/v1/customs/bc20/bills-of-lading?npwp=012345678901000', headers: { authorization: 'Bearer wrong' } })).statusCode, 401)

  const text = (await app.inject({ url: '/metrics' })).body
  t.match(text, /gateway_rate_limited_total\{client="yard-app"\} 1/, 'per client, by name')
  t.match(text, /gateway_idempotency_replays_total\{route="\/v1\/bookings\/:bookingRequestId\/booked"\} 1/)
  t.match(text, /gateway_idempotency_entries 1/)
  t.match(text, /gateway_cache_lookups_total\{operation="noblbc20",result="miss"\} 1/)
  t.match(text, /gateway_cache_lookups_total\{operation="noblbc20",result="hit"\} 1/)
  t.notMatch(text, /gateway_cache_lookups_total\{operation="DetilBooking/, 'writes are not cache lookups')
  t.match(text, /gateway_cache_entries 1/)
  t.match(text, /gateway_cache_bytes [1-9]\d*/)
  t.match(text, /gateway_hub_logins_total\{outcome="ok"\} 1/)
  t.match(text, /gateway_upstream_circuit_state\{upstream="base",operation="DetilBooking\/isBooked",state="closed"\} 1/)
  t.match(text, /gateway_events_connections 0/)
  t.match(text, /gateway_events_connections_limit 1000/)
  t.notMatch(text, new RegExp(`${F.taxpayer.npwp}|${key}|metrics-1|BKG-20240301-0001`), 'no request value in any label')
})

test('the metrics listener (METRICS_PORT) answers GET /metrics and nothing else', async (t) => {
  const { app } = await build(t, { env: { METRICS_PORT: '0' } })
  t.equal((await app.inject({ url: '/metrics' })).statusCode, 404, 'not on the API')
  const server = await startMetricsServer(app.metrics.registry, { host: '127.0.0.1', port: 0 })
  t.teardown(() => server.close())
  const ok = await request(`${server.url}/metrics`)
  t.equal(ok.statusCode, 200)
  t.match(ok.headers['content-type'], /^text\/plain/)
  t.match(await ok.body.text(), /# TYPE gateway_http_requests_total counter/)
  const head = await request(`${server.url}/metrics`, { method: 'HEAD' })
  t.equal(head.statusCode, 200)
  await head.body.dump()
  const other = await request(`${server.url}/health/ready`)
  t.equal(other.statusCode, 404)
  await other.body.dump()
  const post = await request(`${server.url}/metrics`, { method: 'POST', body: 'x' })
  t.equal(post.statusCode, 405)
  t.equal(post.headers.allow, 'GET, HEAD')
  await post.body.dump()
})

test('METRICS_PORT must differ from PORT', async (t) => {
  const { loadConfig, ConfigError } = await import('../src/config/load.ts')
  t.throws(() => loadConfig({ PORT: '3000', METRICS_PORT: '3000' }), new ConfigError(['METRICS_PORT: must differ from PORT (3000); leave it unset to serve /metrics on the API port']))
  t.equal(loadConfig({ METRICS_PORT: '9464' }).METRICS_PORT, 9464)
})
