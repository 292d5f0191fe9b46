import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parser } from '@prometheus-io/lezer-promql'
import { test } from 'tap'
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml'
import { request } from 'undici'
import { SANDBOX_FIXTURES as F } from '../../src/sandbox/index.ts'
import { startMetricsServer } from '../../src/telemetry/metrics-server.ts'
import { build } from '../helpers/helper.ts'
import { startRedisServer } from '../helpers/redis-server.ts'

// deploy/prometheus/alerts.yaml and deploy/grafana/gateway.json against the
// gateway: the rules file and every expression (the dashboard's written into
// a rules file of their own) pass `promtool check rules`, the check operators
// run (Debian's prometheus package; .ci/run installs it: no promtool is a
// failure, never a skip); and every metric they name is one the gateway's
// /metrics declares, read with Prometheus's own PromQL grammar
// (@prometheus-io/lezer-promql), so that a renamed metric or label cannot
// leave a dead alert behind.

interface TestLike { teardown (fn: () => unknown): void }

/** `promtool check rules <file>`: whether it passed, and what it said (stdout and stderr). */
function promtoolCheckRules (file: string): { ok: boolean, output: string } {
  const run = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' })
  if (run.error !== undefined) {
    throw new Error(
      `promtool could not be run (${run.error.message}): install the Debian package prometheus ` +
      '(.ci/run does)'
    )
  }
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` }
}

/** Expressions as recording rules in a temporary rules file, checked by promtool. */
function promtoolCheckExpressions (
  t: TestLike,
  exprs: readonly string[]
): { ok: boolean; output: string } {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-promql-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'expressions.yaml')
  writeFileSync(
    file,
    stringifyYaml({
      groups: [
        {
          name: 'expressions',
          rules: exprs.map((expr, i) => ({ record: `check:expression_${i}`, expr }))
        }
      ]
    })
  )
  return promtoolCheckRules(file)
}

/**
 * The metric names an expression selects (VectorSelector identifiers), by Prometheus's PromQL
 * grammar.
 */
export function metricNames (expr: string): string[] {
  const names: string[] = []
  parser.parse(expr).iterate({
    enter (node) {
      if (node.type.isError) throw new Error(`PromQL syntax error at ${node.from}: ${expr}`)
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector') {
        names.push(expr.slice(node.from, node.to))
      }
    }
  })
  return names
}

/** Series Prometheus makes itself rather than the gateway. */
const PROMETHEUS_SERIES = new Set(['ALERTS', 'ALERTS_FOR_STATE', 'up'])

/** Every series name the exposition text declares (a histogram's _bucket, _sum and _count). */
function declared (text: string): Set<string> {
  const names = new Set<string>()
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!)
    if (type === 'histogram') {
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`)
    }
    if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(`${name}${suffix}`)
  }
  return names
}

const ALERTS_FILE = fileURLToPath(new URL('../../deploy/prometheus/alerts.yaml', import.meta.url))
const ALERTS = parseYaml(readFileSync(ALERTS_FILE, 'utf8')) as {
  groups: Array<{ rules: Array<{ alert: string; expr: string; labels?: Record<string, string> }> }>
}
const DASHBOARD = JSON.parse(
  readFileSync(new URL('../../deploy/grafana/gateway.json', import.meta.url), 'utf8')
) as {
  panels: Array<{ title: string; targets: Array<{ expr: string }> }>
  annotations: { list: Array<{ expr?: string }> }
}

/** Grafana's variables, as a query would run. */
function withGrafanaVariables (expr: string): string {
  return expr.replaceAll('$__rate_interval', '5m').replaceAll('$job', '.*')
}

/** Every expression of the dashboard, its variables replaced. */
function dashboardExpressions (): Array<{ where: string, expr: string }> {
  return [
    ...DASHBOARD.panels.flatMap((panel) =>
      panel.targets.map(({ expr }) => ({
        where: `panel ${panel.title}`,
        expr: withGrafanaVariables(expr)
      }))
    ),
    ...DASHBOARD.annotations.list.flatMap(({ expr }) =>
      expr === undefined ? [] : [{ where: 'annotation', expr: withGrafanaVariables(expr) }]
    )
  ]
}

function alertRules (): Array<{ alert: string, expr: string, labels?: Record<string, string> }> {
  return ALERTS.groups.flatMap(group => group.rules)
}

test('promtool finds syntax and type errors, and the metric names are read from the grammar (so ' +
  'that a clean result means something)', async (t) => {
  const broken = [
    ['rate(gateway_http_requests_total[5m]', /unclosed left parenthesis/],
    ['gateway_http_requests_total{status_code=}', /parse error/],
    ['rate(gateway_http_requests_total)', /expected type range vector in call to function "rate"/],
    ['gateway_events_connections and 1', /set operator "and" not allowed/]
  ] as const
  for (const [expr, why] of broken) {
    const { ok, output } = promtoolCheckExpressions(t, [expr])
    t.notOk(ok, `refused: ${expr}`)
    t.match(output, why)
  }
  t.ok(
    promtoolCheckExpressions(t, [
      'sum by (le) (rate(gateway_http_request_duration_seconds_bucket[5m]))'
    ]).ok,
    'a valid one passes'
  )
  t.same(
    metricNames(
      'sum by (le) (rate(gateway_http_request_duration_seconds_bucket{job=~".*"}[5m])) / on ' +
      '(instance) group_left gateway_info offset 5m'
    ),
    ['gateway_http_request_duration_seconds_bucket', 'gateway_info'],
    'metrics, not functions, labels or keywords'
  )
  // The whole expression, however long.
  const names = Array.from({ length: 200 }, (_, i) => `gateway_series_${i}`)
  t.same(metricNames(names.join(' + ')), names, 'every metric of a long expression')
  t.throws(() => metricNames('rate(x[5m]'), /PromQL syntax error/)
})

test('the alert rules file passes promtool check rules, and every alert says how urgent it ' +
  'is', async (t) => {
  const { ok, output } = promtoolCheckRules(ALERTS_FILE)
  t.ok(ok, output)
  t.match(output, /SUCCESS: 9 rules found/)
  const rules = alertRules()
  t.same(rules.map((r) => r.alert).sort(), [
    'GatewayCircuitOpen',
    'GatewayEventSocketsNearLimit',
    'GatewayHubAuthFailed',
    'GatewayHubDrift',
    'GatewayHubErrorRatio',
    'GatewayIdempotencyUnsettled',
    'GatewayLatencyHigh',
    'GatewayOverloaded',
    'GatewayRedisDown'
  ])
  t.same(
    rules.filter((r) => typeof r.labels?.severity !== 'string').map((r) => r.alert),
    [],
    'labels.severity on every alert (docs/operations.md pages or warns by it)'
  )
})

test("the dashboard's queries pass promtool (as recording rules of a temporary rules " +
  'file)', async (t) => {
  t.ok(DASHBOARD.panels.length >= 10)
  for (const panel of DASHBOARD.panels) t.ok(panel.targets.length > 0, `${panel.title} has a query`)
  const expressions = dashboardExpressions()
  t.same(
    expressions
      .filter(({ expr }) => expr.includes('$'))
      .map(({ where, expr }) => `${where}: ${expr}`),
    [],
    'no Grafana variable left unreplaced'
  )
  const { ok, output } = promtoolCheckExpressions(
    t,
    expressions.map(({ expr }) => expr)
  )
  t.ok(ok, output)
  t.match(output, new RegExp(`SUCCESS: ${expressions.length} rules found`))
})

test('every metric the alerts and the dashboard use is one the gateway exposes (Redis state ' +
  'on)', async (t) => {
  const redis = await startRedisServer(t)
  const { app } = await build(t, { env: { REDIS_URL: redis.url } })
  // A little traffic, so that the exposition is the one of a gateway at work.
  await app.inject({ url: `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}` })
  const text = (await app.inject({ url: '/metrics' })).body
  const exposed = declared(text)
  const used = new Map<string, string>()
  for (const { alert, expr } of alertRules()) {
    for (const name of metricNames(expr)) used.set(name, 'alert ' + `${alert}`)
  }
  for (const { where, expr } of dashboardExpressions()) {
    for (const name of metricNames(expr)) used.set(name, where)
  }
  t.ok(used.size >= 15, `${used.size} metrics used`)
  const missing = [...used]
    .filter(([name]) => !exposed.has(name) && !PROMETHEUS_SERIES.has(name))
    .map(([name, where]) => `${name} (${where})`)
  t.same(missing, [], 'no metric the gateway does not expose')
  // Labels the rules select on are the gateway's own.
  t.match(
    text,
    /gateway_http_requests_total\{method="GET",route="\/v1\/customs\/bc20\/bills-of-lading",status_code="200"\} 1/
  )
  t.match(
    text,
    /gateway_upstream_circuit_state\{upstream="hub",operation="noblbc20",state="open"\} 0/
  )
})

test('the gateway counts what the dashboard shows: limits per client, replays, cache results, ' +
  'circuits, logins', async (t) => {
  const key = 'cgw_METRICStestKEYmetricsTESTkeyMETRICStest1234'
  const { app } = await build(t, {
    clients: [
      {
        name: 'yard-app',
        key,
        scopes: ['customs:read', 'bookings:write'],
        rateLimit: { max: 4, timeWindow: '1 minute' }
      }
    ],
    env: { CACHE_TTL_SECONDS: '30', UPSTREAM_CREDENTIALS: 'login', UPSTREAM_ACCESS_TOKEN: '' },
    profile: { breaker: { volumeThreshold: 1 } }
  })
  const headers = { authorization: `Bearer ${key}` }
  const lookup = `/v1/customs/bc20/bills-of-lading?npwp=${F.taxpayer.npwp}`
  t.equal((await app.inject({ url: lookup, headers })).statusCode, 200)
  t.equal((await app.inject({ url: lookup, headers })).statusCode, 200, 'from the cache')
  const booked = {
    method: 'POST' as const,
    url: '/v1/bookings/BKG-20240301-0001/booked',
    payload: { booked: true },
    headers: { ...headers, 'idempotency-key': 'metrics-1' }
  }
  t.equal((await app.inject(booked)).statusCode, 200)
  t.equal((await app.inject(booked)).headers['idempotent-replayed'], 'true')
  t.equal((await app.inject({ url: lookup, headers })).statusCode, 429, 'over its limit')
  t.equal(
    (
      await app.inject({
        url: '/v1/customs/bc20/bills-of-lading?npwp=012345678901000',
        headers: { authorization: 'Bearer wrong' }
      })
    ).statusCode,
    401
  )

  const text = (await app.inject({ url: '/metrics' })).body
  t.match(text, /gateway_rate_limited_total\{client="yard-app"\} 1/, 'per client, by name')
  t.match(
    text,
    /gateway_idempotency_replays_total\{route="\/v1\/bookings\/:bookingRequestId\/booked"\} 1/
  )
  t.match(text, /gateway_idempotency_entries 1/)
  t.match(text, /gateway_cache_lookups_total\{operation="noblbc20",result="miss"\} 1/)
  t.match(text, /gateway_cache_lookups_total\{operation="noblbc20",result="hit"\} 1/)
  t.notMatch(
    text,
    /gateway_cache_lookups_total\{operation="DetilBooking/,
    'writes are not cache lookups'
  )
  t.match(text, /gateway_cache_entries 1/)
  t.match(text, /gateway_cache_bytes [1-9]\d*/)
  t.match(text, /gateway_hub_logins_total\{outcome="ok"\} 1/)
  t.match(
    text,
    /gateway_upstream_circuit_state\{upstream="base",operation="DetilBooking\/isBooked",state="closed"\} 1/
  )
  t.match(text, /gateway_events_connections 0/)
  t.match(text, /gateway_events_connections_limit 1000/)
  t.notMatch(
    text,
    new RegExp(`${F.taxpayer.npwp}|${key}|metrics-1|BKG-20240301-0001`),
    'no request value in any label'
  )
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
  const { loadConfig, ConfigError } = await import('../../src/config/load.ts')
  t.throws(
    () => loadConfig({ PORT: '3000', METRICS_PORT: '3000' }),
    new ConfigError([
      'METRICS_PORT: must differ from PORT (3000); leave it unset to serve /metrics on the API port'
    ])
  )
  t.equal(loadConfig({ METRICS_PORT: '9464' }).METRICS_PORT, 9464)
})
