import { ConfigError } from './load.ts'

/**
 * Whether tracing is on, from the standard OpenTelemetry variables
 * (https://opentelemetry.io/docs/specs/otel/configuration/sdk-environment-variables/).
 * The SDK reads them itself (telemetry/tracing.ts); here they only decide
 * whether it is loaded at all, and values the SDK would silently replace
 * with a default (an unknown exporter, protocol or sampler) stop start-up
 * instead, like every other setting.
 *
 * On when OTEL_TRACES_EXPORTER names an exporter or an OTLP endpoint is set
 * (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); off
 * with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none, and when none of
 * them is set: then no part of the SDK is loaded.
 */
export interface TracingSettings {
  enabled: boolean
}

const EXPORTERS = ['otlp', 'console', 'none']
const PROTOCOLS = ['http/protobuf', 'http/json', 'grpc']
const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio'
]

function value (env: Record<string, string | undefined>, name: string): string | undefined {
  const raw = env[name]?.trim()
  return raw === undefined || raw === '' ? undefined : raw
}

/** Throws ConfigError with one line per problem. */
export function tracingSettings (env: Record<string, string | undefined>): TracingSettings {
  const problems: string[] = []
  const exporters = (value(env, 'OTEL_TRACES_EXPORTER') ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '')
  for (const name of exporters) {
    if (!EXPORTERS.includes(name)) {
      problems.push(`OTEL_TRACES_EXPORTER: ${name} is not ` +
      `supported: ${EXPORTERS.join(', ')}`)
    }
  }
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = value(env, name)
    if (protocol !== undefined && !PROTOCOLS.includes(protocol)) {
      problems.push(`${name}: must ` +
      `be one of ${PROTOCOLS.join(', ')}`)
    }
  }
  const sampler = value(env, 'OTEL_TRACES_SAMPLER')
  if (sampler !== undefined && !SAMPLERS.includes(sampler)) {
    problems.push('OTEL_TRACES_SAMPLER: ' +
    `must be one of ${SAMPLERS.join(', ')}`)
  }
  const ratio = value(env, 'OTEL_TRACES_SAMPLER_ARG')
  if (
    ratio !== undefined &&
    sampler?.endsWith('traceidratio') === true &&
    !(Number(ratio) >= 0 && Number(ratio) <= 1)
  ) {
    problems.push(
      'OTEL_TRACES_SAMPLER_ARG: must be a number from 0 to 1 (the share of traces kept)'
    )
  }
  const disabled = value(env, 'OTEL_SDK_DISABLED')
  if (disabled !== undefined && disabled !== 'true' && disabled !== 'false') {
    problems.push('OTEL_SDK_DISABLED: ' +
    'must be true or false')
  }
  if (problems.length > 0) throw new ConfigError(problems)

  const asked =
    exporters.length > 0 ||
    value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') !== undefined ||
    value(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') !== undefined
  return { enabled: asked && disabled !== 'true' && !exporters.includes('none') }
}
