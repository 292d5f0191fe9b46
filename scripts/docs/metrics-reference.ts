import type { Registry } from 'prom-client'
import { code, generatedNote, table } from './markdown.ts'

/**
 * docs/reference/metrics.md: every metric the gateway exports, read from
 * the prom-client registry of a built gateway (app.metrics.registry), not
 * from a list of its own. Written by `npm run openapi`; a test fails when the
 * committed page differs.
 */

export const METRICS_REFERENCE_PATH = 'docs/reference/metrics.md'

export interface MetricRow { name: string, type: string, labels: readonly string[], help: string }

/** prom-client's default metrics (collectDefaultMetrics): one row for all of them. */
const DEFAULT_METRICS = /^(process|nodejs)_/

/** The metrics of a registry, by name. Labels are read off the metric objects, which keep them. */
export function metricRows (registry: Registry): MetricRow[] {
  return registry.getMetricsAsArray().map(metric => ({
    name: metric.name,
    type: String(metric.type),
    labels: 'labelNames' in metric && Array.isArray(metric.labelNames)
      ? metric.labelNames.map(String)
      : [],
    help: metric.help
  })).sort((a, b) => a.name.localeCompare(b.name))
}

/**
 * The Markdown of docs/reference/metrics.md: the metrics of the gateway as
 * built with the default settings, and those it adds with REDIS_URL set.
 */
export function renderMetricsReference (
  plain: readonly MetricRow[],
  withRedis: readonly MetricRow[]
): string {
  const always = new Set(plain.map(row => row.name))
  const all = new Map([...plain, ...withRedis].map(row => [row.name, row]))
  const own = [...all.values()].filter(row => !DEFAULT_METRICS.test(row.name))
    .sort((a, b) => a.name.localeCompare(b.name))
  const rows = own.map(row => [
    code(row.name),
    row.type,
    row.labels.map(code).join(', '),
    always.has(row.name) ? row.help : `${row.help} (only with \`REDIS_URL\` set)`
  ])
  if ([...all.keys()].some(name => DEFAULT_METRICS.test(name))) {
    rows.push([
      '`process_*`, `nodejs_*`',
      'several',
      '',
      'prom-client\'s default metrics of the process: CPU, memory, file descriptors, ' +
        'event loop lag, heap, garbage collection, handles, Node.js version'
    ])
  }
  return [
    '# Metrics',
    '',
    generatedNote('the prom-client registry of the built gateway'),
    '',
    'What `GET /metrics` exports, in the Prometheus text format. Histograms add `le` to ' +
      'their labels.',
    '',
    table(['Metric', 'Type', 'Labels', 'Help'], rows),
    ''
  ].join('\n')
}
