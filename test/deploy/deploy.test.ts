import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Redis } from 'ioredis'
import { test } from 'tap'
import { loadConfig } from '../../src/config/load.ts'
import { ConfigSchema } from '../../src/config/schema.ts'
import { FUNCTION_LIBRARY } from '../../src/state/redis/functions.ts'
import {
  balancerCheckProblems,
  balancerTimeoutProblems,
  composeConfigProblems,
  composeEnvNameProblems,
  composeFunctionsProblems,
  composeHardeningProblems,
  composeMetricsProblems,
  composePortProblems,
  composeRedisProblems,
  composeSecretProblems,
  composeShutdownProblems,
  kubernetesConfigProblems,
  kubernetesEnvNameProblems,
  kubernetesHardeningProblems,
  kubernetesNetworkProblems,
  kubernetesPortProblems,
  kubernetesProbeProblems,
  kubernetesSecretProblems,
  kubernetesShutdownProblems,
  type ComposeDeployment
} from './checks.ts'
import {
  composeSchemaProblems,
  interpolate,
  readCompose,
  readEnvLines,
  type ComposeFile
} from './compose.ts'
import { parseHaproxy, readHaproxy } from '../helpers/haproxy.ts'
import { schemaProblems, unknownFieldProblems } from './kubernetes-schema.ts'
import { render, type KubeObject } from './kustomize.ts'
import { build, configProblems } from '../helpers/helper.ts'
import { redisUserRules, startRedisServer } from '../helpers/redis-server.ts'

/**
 * deploy/: the Compose stack and the Kubernetes manifests, checked without a
 * cluster, a container engine or the network: against the Compose
 * Specification and the Kubernetes API schemas, and against the gateway
 * itself (its settings, port, routes and timeouts), so that neither can
 * drift from the other. Every check is also shown to fail on a copy of the
 * deployment with one mistake in it.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const path = (...parts: string[]) => join(ROOT, ...parts)
const text = (...parts: string[]) => readFileSync(path(...parts), 'utf8')

/**
 * `node src/redis-functions.ts …` (dist/redis-functions.js in the image), its coverage joining the
 * suite's.
 */
function redisFunctions (...args: string[]) {
  const coverage =
    process.env.NODE_V8_COVERAGE === undefined
      ? {}
      : { NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE }
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/redis-functions.ts', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...coverage }
  })
}

/** Runs deploy/init-secrets.sh into a new directory, removed in teardown. */
function initSecrets (
  t: { teardown(fn: () => void): void },
  env: Record<string, string> = {}
): { dir: string; status: number | null; output: string } {
  const dir = join(mkdtempSync(join(tmpdir(), 'gateway-deploy-')), 'secrets')
  t.teardown(() => rmSync(join(dir, '..'), { recursive: true, force: true }))
  return { dir, ...runInit(dir, env) }
}

function runInit (
  dir: string,
  env: Record<string, string> = {}
): { status: number | null; output: string } {
  const run = spawnSync('sh', [path('deploy/init-secrets.sh')], {
    env: { PATH: process.env.PATH ?? '', SECRETS_DIR: dir, ...env },
    encoding: 'utf8'
  })
  return { status: run.status, output: `${run.stdout}${run.stderr}` }
}

/**
 * The Compose deployment as an operator starts it: deploy/hub.env.example
 * (with its commented lines too when `login`: login mode), and the secret
 * files deploy/init-secrets.sh writes, with what the operator fills in.
 */
function composeDeployment (
  t: { teardown(fn: () => void): void },
  { login = false } = {}
): ComposeDeployment {
  const hub = readEnvLines(text('deploy/hub.env.example'), { commented: login })
  const { dir } = initSecrets(t)
  const filled = login
    ? {
        'hub-api-key': 'example-hub-key',
        'hub-login-username': 'example-user',
        'hub-login-password': 'example-password'
      }
    : { 'hub-api-key': 'example-hub-key', 'hub-access-token': 'example-hub-token' }
  for (const [file, value] of Object.entries(filled)) writeFileSync(join(dir, file), `${value}\n`)
  return {
    dockerfile: text('Dockerfile'),
    compose: interpolate(readCompose(path('deploy/compose.yaml')), hub) as ComposeFile,
    demo: interpolate(readCompose(path('deploy/compose.demo.yaml')), hub) as ComposeFile,
    haproxy: readHaproxy(path('deploy/haproxy.cfg')),
    secretsDir: dir,
    ignored: (file) => spawnSync('git', ['check-ignore', '-q', file], { cwd: ROOT }).status === 0
  }
}

const base = () => render(path('deploy/kubernetes/base'))
const overlay = () => render(path('deploy/kubernetes/overlays/example'))

function find (objects: KubeObject[], kind: string): KubeObject & Record<string, any> {
  const object = objects.find(o => o.kind === kind)
  if (object === undefined) throw new Error(`no ${kind}`)
  return object as KubeObject & Record<string, any>
}

/** The gateway's first container in a rendering. */
function gatewayContainer (objects: KubeObject[]): Record<string, any> {
  return find(objects, 'Deployment').spec.template.spec.containers[0]
}

async function routeChecker (t: Parameters<typeof build>[0]): Promise<(path: string) => boolean> {
  const { app } = await build(t)
  return (url: string) => app.hasRoute({ method: 'GET', url })
}

test('the Compose files are valid against the Compose Specification', async (t) => {
  const d = composeDeployment(t)
  t.same(composeSchemaProblems(d.compose), [], 'compose.yaml, with deploy/hub.env.example')
  t.same(
    composeSchemaProblems(interpolate(readCompose(path('deploy/compose.yaml')), {})),
    [],
    'compose.yaml, with no variable set'
  )
  t.same(composeSchemaProblems(d.demo), [], 'compose.demo.yaml')
  const sentinel = interpolate(readCompose(path('deploy/compose.sentinel.yaml')), {}) as ComposeFile
  t.same(composeSchemaProblems(sentinel), [], 'compose.sentinel.yaml')
  const sentinelEnv =
    (sentinel.services['gateway-1'] as { environment?: Record<string, string> }).environment ?? {}
  t.same(
    configProblems({ REDIS_URL: 'redis://gateway:pw@mymaster', ...sentinelEnv }).filter(
      (problem) => !problem.startsWith('REDIS_SENTINEL_PASSWORD_FILE')
    ),
    [],
    'its gateway settings load'
  )
  t.ok(
    Object.keys(sentinelEnv).includes('REDIS_SENTINELS'),
    'the replicas find the master through the Sentinels'
  )
  t.ok(
    Object.keys(d.compose.services).includes('haproxy') &&
      Object.keys(d.compose.services).includes('redis'),
    'a balancer and a Redis beside the replicas'
  )
  t.same(
    Object.keys(d.demo.services).sort(),
    ['gateway-1', 'gateway-2'],
    'the demo changes the replicas only'
  )
  const broken = structuredClone(d.compose)
  Object.assign(broken.services.redis ?? {}, { restartt: 'always', ports: 6379 })
  t.same(
    composeSchemaProblems(broken).sort(),
    [
      '/services/redis must NOT have additional properties: restartt',
      '/services/redis/ports must be array'
    ],
    'a misspelt key and a wrong type are refused'
  )
  t.throws(
    () => interpolate('$' + '{HUB:?set it}', {}),
    /unsupported interpolation/,
    'an interpolation form the checks do not read is refused'
  )
})

test('every Kubernetes manifest, base and overlay as Kustomize renders them, is valid against ' +
  'the Kubernetes API schemas', async (t) => {
  for (const [label, objects] of [
    ['base', base()],
    ['overlay', overlay()]
  ] as const) {
    t.same(
      objects.map((o) => o.kind).sort(),
      [
        ...(label === 'overlay' ? ['Namespace'] : []),
        'ConfigMap',
        'Deployment',
        'HorizontalPodAutoscaler',
        'NetworkPolicy',
        'PodDisruptionBudget',
        'Service'
      ].sort(),
      `${label}: the objects`
    )
    t.same(await schemaProblems(objects), [], `${label}: types, formats, enums and required fields`)
    t.same(unknownFieldProblems(objects), [], `${label}: no field the API does not know`)
  }
  const broken = overlay()
  const container = gatewayContainer(broken)
  container.readynessProbe = container.readinessProbe
  container.resources.limits.memory = '512 MB'
  find(broken, 'Service').spec.ports[0].port = '80'
  broken.push({ apiVersion: 'v1', kind: 'Pdo', metadata: { name: 'x' } })
  t.match(await schemaProblems(broken), [
    /^Deployment\/customs-gateway: .*memory must match format "quantity"/,
    /^Service\/customs-gateway: .*port must be integer/,
    /^Pdo\/x: no Kubernetes schema/
  ])
  t.match(unknownFieldProblems(broken.slice(0, -1)), [
    /^Deployment\/customs-gateway: .*'"readynessProbe"' does not exist in type 'IContainer'/,
    /^Service\/customs-gateway: .*not assignable/
  ])
})

test('the overlay renders as Kustomize would: namespace, image, JSON patches; anything else is ' +
  'refused', async (t) => {
  const objects = overlay()
  t.same(
    objects.filter((o) => o.kind !== 'Namespace').map((o) => o.metadata.namespace),
    objects.filter((o) => o.kind !== 'Namespace').map(() => 'customs-gateway'),
    'every namespaced object in the namespace'
  )
  t.equal(find(objects, 'Namespace').metadata.namespace, undefined, 'the Namespace itself has none')
  t.equal(
    gatewayContainer(objects).image,
    'registry.example.internal/customs-gateway:1.0.0',
    'the image'
  )
  t.equal(gatewayContainer(base()).image, 'customs-gateway', 'the base names the image only')
  const patched = {
    UPSTREAM_HUB_URL: 'https://hub.example.go.id',
    UPSTREAM_PROFILE_FILE: 'deploy/profiles/documented-production.json'
  }
  t.match(find(objects, 'ConfigMap').data, patched, 'the ConfigMap patched over the base')
  t.same(
    find(objects, 'NetworkPolicy').spec.egress[1].to,
    [{ ipBlock: { cidr: '203.0.113.0/24' } }],
    'the NetworkPolicy patched'
  )
  t.equal(
    find(objects, 'Deployment').spec.template.spec.volumes[0].secret.defaultMode,
    0o440,
    'YAML 1.1, as Kubernetes reads it: 0440 is octal'
  )
  const dir = mkdtempSync(join(tmpdir(), 'gateway-kustomize-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const { writeFileSync } = await import('node:fs')
  writeFileSync(
    join(dir, 'kustomization.yaml'),
    'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: ' +
    `[${path('deploy/kubernetes/base')}]\ncommonLabels: { team: customs }\n`
  )
  t.throws(
    () => render(dir),
    /commonLabels is not rendered/,
    'a field the renderer does not know is an error, not left out'
  )
})

test('the deployments cannot drift from the gateway: settings, ports, routes, timeouts, secrets, ' +
  'hardening', async (t) => {
  const hasRoute = await routeChecker(t)
  const d = composeDeployment(t)
  const compose = {
    'env names': composeEnvNameProblems(d),
    'settings load': composeConfigProblems(d),
    ports: composePortProblems(d),
    'stop grace': composeShutdownProblems(d),
    'balancer timeouts': balancerTimeoutProblems(d),
    'balancer health check': balancerCheckProblems(d, hasRoute),
    secrets: composeSecretProblems(d),
    redis: composeRedisProblems(d),
    'redis functions': composeFunctionsProblems(d),
    'metrics off the balancer': composeMetricsProblems(d),
    hardening: composeHardeningProblems(d)
  }
  for (const [check, problems] of Object.entries(compose)) t.same(problems, [], `compose: ${check}`)
  const login = composeDeployment(t, { login: true })
  t.same(
    [...composeConfigProblems(login), ...composeSecretProblems(login)],
    [],
    "compose in login mode (deploy/hub.env.example's commented lines): the account from its " +
    'mounted files'
  )
  for (const [label, objects] of [
    ['base', base()],
    ['overlay', overlay()]
  ] as const) {
    const kubernetes = {
      'env names': kubernetesEnvNameProblems(objects),
      ports: kubernetesPortProblems(objects, d.dockerfile),
      probes: kubernetesProbeProblems(objects, hasRoute),
      'termination grace': kubernetesShutdownProblems(objects, d.dockerfile),
      secrets: kubernetesSecretProblems(objects),
      hardening: kubernetesHardeningProblems(objects),
      'network policy': kubernetesNetworkProblems(objects, d.dockerfile)
    }
    for (const [check, problems] of Object.entries(kubernetes)) {
      t.same(problems, [], `${label}: ` + `${check}`)
    }
  }
  t.same(
    kubernetesConfigProblems(overlay(), d.dockerfile),
    [],
    'overlay: the settings load as the gateway loads them'
  )
  t.same(
    kubernetesConfigProblems(base(), d.dockerfile),
    [
      'Deployment/customs-gateway gateway: UPSTREAM_HUB_URL: is required with ' +
      'NODE_ENV=production ' +
        '(set UPSTREAM_HUB_URL and UPSTREAM_BASE_URL, or SANDBOX=true to serve the built-in ' +
        "sandbox's seeded data)"
    ],
    'base alone: the gateway refuses to start without the hub an overlay names'
  )
})

/** A deep copy of `value` (its functions shared) with one change. */
function changed<T extends object> (value: T, change: (copy: T) => void): T {
  const copy = Array.isArray(value)
    ? structuredClone(value)
    : (Object.fromEntries(
        Object.entries(value).map(([key, item]) => [
          key,
          typeof item === 'function' ? item : structuredClone(item)
        ])
      ) as T)
  change(copy)
  return copy
}

test('each check fails when the deployment drifts from the gateway', async (t) => {
  const hasRoute = await routeChecker(t)
  const d = composeDeployment(t)
  const o = overlay()
  const gateway1 = (c: ComposeDeployment) => c.compose.services['gateway-1'] as Record<string, any>
  const env1 = (c: ComposeDeployment): Record<string, string> => gateway1(c).environment
  const data = (objects: KubeObject[]): Record<string, string> => find(objects, 'ConfigMap').data
  const container = (objects: KubeObject[]) => gatewayContainer(objects)
  const dockerfile = d.dockerfile
  const cases: Array<[string, string[]]> = [
    [
      'compose: a setting the gateway does not have',
      composeEnvNameProblems(
        changed(d, (c) => {
          gateway1(c).environment.UPSTREAM_HUBURL = 'x'
        })
      )
    ],
    [
      'compose: a value the gateway refuses',
      composeConfigProblems(
        changed(d, (c) => {
          gateway1(c).environment.SHUTDOWN_GRACE_MS = '10 s'
        })
      )
    ],
    [
      'compose: the demo without SANDBOX',
      composeConfigProblems(
        changed(d, (c) => {
          delete (c.demo.services['gateway-2'] as Record<string, any>).environment.SANDBOX
        })
      )
    ],
    [
      'compose: the demo sending the hub key to the sandbox',
      composeConfigProblems(
        changed(d, (c) => {
          delete (c.demo.services['gateway-1'] as Record<string, any>).environment
            .UPSTREAM_API_KEY_FILE
        })
      )
    ],
    [
      'compose: the demo logging in to the sandbox with the hub account',
      composeConfigProblems(
        changed(composeDeployment(t, { login: true }), (c) => {
          const demo = (c.demo.services['gateway-2'] as Record<string, any>).environment
          delete demo.UPSTREAM_LOGIN_USERNAME_FILE
          delete demo.UPSTREAM_LOGIN_PASSWORD_FILE
        })
      )
    ],
    [
      'compose: the hub key file left empty',
      composeConfigProblems(
        changed(composeDeployment(t), (c) => {
          writeFileSync(join(c.secretsDir, 'hub-api-key'), '')
        })
      )
    ],
    [
      'compose: the Dockerfile exposing another port',
      composePortProblems(
        changed(d, (c) => {
          c.dockerfile = c.dockerfile.replace('EXPOSE 3000', 'EXPOSE 8080')
        })
      )
    ],
    [
      'compose: the image without HOST=0.0.0.0 (loopback in the container)',
      composePortProblems(
        changed(d, (c) => {
          c.dockerfile = c.dockerfile.replace(/^\s*HOST=0\.0\.0\.0$/m, '')
        })
      )
    ],
    [
      'compose: HAProxy on another port',
      composePortProblems(
        changed(d, (c) => {
          c.haproxy = parseHaproxy(
            text('deploy/haproxy.cfg').replace('gateway-2:3000', 'gateway-2:8080')
          )
        })
      )
    ],
    [
      'compose: a third replica HAProxy does not know',
      composePortProblems(
        changed(d, (c) => {
          c.compose.services['gateway-3'] = structuredClone(gateway1(c))
        })
      )
    ],
    [
      'compose: stop_grace_period not above SHUTDOWN_GRACE_MS',
      composeShutdownProblems(
        changed(d, (c) => {
          gateway1(c).stop_grace_period = '10s'
        })
      )
    ],
    [
      'haproxy: timeout server not below the keep-alive',
      balancerTimeoutProblems(
        changed(d, (c) => {
          c.haproxy = parseHaproxy(
            text('deploy/haproxy.cfg').replace('timeout server 60s', 'timeout server 75s')
          )
        })
      )
    ],
    [
      "haproxy: the gateway's keep-alive lowered below it",
      balancerTimeoutProblems(
        changed(d, (c) => {
          gateway1(c).environment.SERVER_KEEP_ALIVE_TIMEOUT_MS = '50000'
        })
      )
    ],
    [
      'haproxy: timeout server shorter than the hub deadline',
      balancerTimeoutProblems(
        changed(d, (c) => {
          c.haproxy = parseHaproxy(
            text('deploy/haproxy.cfg').replace('timeout server 60s', 'timeout server 10s')
          )
        })
      )
    ],
    [
      'haproxy: a tunnel timeout that cuts live WebSockets',
      balancerTimeoutProblems(
        changed(d, (c) => {
          c.haproxy = parseHaproxy(
            text('deploy/haproxy.cfg').replace('timeout tunnel 1h', 'timeout tunnel 20s')
          )
        })
      )
    ],
    [
      'haproxy: a health check on a route the gateway lacks',
      balancerCheckProblems(
        changed(d, (c) => {
          c.haproxy = parseHaproxy(
            text('deploy/haproxy.cfg').replace('uri /health/ready', 'uri /healthz')
          )
        }),
        hasRoute
      )
    ],
    [
      'haproxy: a health check on liveness, not readiness',
      balancerCheckProblems(
        changed(d, (c) => {
          c.haproxy = parseHaproxy(
            text('deploy/haproxy.cfg').replace('uri /health/ready', 'uri /health/live')
          )
        }),
        hasRoute
      )
    ],
    [
      'haproxy: no X-Forwarded-For for TRUST_PROXY',
      balancerCheckProblems(
        changed(d, (c) => {
          c.haproxy = parseHaproxy(text('deploy/haproxy.cfg').replace('option forwardfor', ''))
        }),
        hasRoute
      )
    ],
    [
      'haproxy: a POST retried after its connection closed',
      balancerCheckProblems(
        changed(d, (c) => {
          c.haproxy = parseHaproxy(
            text('deploy/haproxy.cfg').replace(
              'http-request disable-l7-retry unless METH_GET || METH_HEAD',
              ''
            )
          )
        }),
        hasRoute
      )
    ],
    [
      'compose: REDIS_URL written inline with its password',
      composeSecretProblems(
        changed(d, (c) => {
          gateway1(c).environment.REDIS_URL = 'redis://gateway:pw@redis:6379'
        })
      )
    ],
    [
      'compose: the hub key written inline',
      composeSecretProblems(
        changed(d, (c) => {
          gateway1(c).environment.UPSTREAM_API_KEY = 'k'
        })
      )
    ],
    [
      'compose: the hub key file not mounted',
      composeSecretProblems(
        changed(d, (c) => {
          gateway1(c).secrets = gateway1(c).secrets.filter((s: unknown) => s !== 'hub-api-key')
        })
      )
    ],
    [
      'compose: REDIS_URL_FILE outside the mounted secrets',
      composeSecretProblems(
        changed(d, (c) => {
          env1(c).REDIS_URL_FILE = '/app/redis-url'
        })
      )
    ],
    [
      'compose: a secret init-secrets.sh does not write',
      composeSecretProblems(
        changed(d, (c) => {
          c.compose.secrets = { ...c.compose.secrets, 'hub-other': { file: './secrets/hub-other' } }
        })
      )
    ],
    [
      'compose: REDIS_URL beside its file',
      composeConfigProblems(
        changed(d, (c) => {
          env1(c).REDIS_URL = 'redis://gateway@redis:6379'
        })
      )
    ],
    [
      'compose: a setting 1.0.0 removed',
      composeConfigProblems(
        changed(d, (c) => {
          env1(c).UPSTREAM_ENV = 'production'
        })
      )
    ],
    [
      'compose: a hub profile the image does not ship',
      composeConfigProblems(
        changed(d, (c) => {
          env1(c).UPSTREAM_PROFILE_FILE = '/etc/hub.json'
        })
      )
    ],
    [
      'compose: a shipped profile that does not load',
      composeConfigProblems(
        changed(d, (c) => {
          env1(c).UPSTREAM_PROFILE_FILE = 'deploy/profiles/profile.schema.json'
        })
      )
    ],
    [
      'compose: a secret from the environment',
      composeSecretProblems(
        changed(d, (c) => {
          c.compose.secrets = {
            ...c.compose.secrets,
            'hub-access-token': { environment: 'HUB_TOKEN' }
          }
        })
      )
    ],
    [
      'compose: a secret file git would commit',
      composeSecretProblems(
        changed(d, (c) => {
          c.compose.secrets = { ...c.compose.secrets, 'clients.json': { file: './clients.json' } }
        })
      )
    ],
    [
      'compose: CLIENTS_FILE outside the mounted secrets',
      composeSecretProblems(
        changed(d, (c) => {
          gateway1(c).environment.CLIENTS_FILE = '/app/clients.json'
        })
      )
    ],
    [
      'compose: Redis password on the command line',
      composeSecretProblems(
        changed(d, (c) => {
          ;(c.compose.services.redis?.command ?? []).push('--requirepass', 'pw')
        })
      )
    ],
    [
      'compose: Redis without appendonly',
      composeRedisProblems(
        changed(d, (c) => {
          const command = c.compose.services.redis?.command ?? []
          command[command.indexOf('--appendonly') + 1] = 'no'
        })
      )
    ],
    [
      'compose: a writable replica',
      composeHardeningProblems(
        changed(d, (c) => {
          delete gateway1(c).read_only
        })
      )
    ],
    [
      'compose: /metrics on the API port (no METRICS_PORT)',
      composeMetricsProblems(
        changed(d, (c) => {
          delete gateway1(c).environment.METRICS_PORT
        })
      )
    ],
    [
      'compose: HAProxy forwarding to METRICS_PORT',
      composeMetricsProblems(
        changed(d, (c) => {
          c.haproxy = parseHaproxy(
            text('deploy/haproxy.cfg').replace('gateway-2:3000', 'gateway-2:9464')
          )
        })
      )
    ],
    [
      'compose: a replica not waiting for the Redis functions',
      composeFunctionsProblems(
        changed(d, (c) => {
          delete gateway1(c).depends_on['redis-functions']
        })
      )
    ],
    [
      'compose: the functions loader without its secret',
      composeFunctionsProblems(
        changed(d, (c) => {
          ;(c.compose.services['redis-functions'] as Record<string, any>).secrets = []
        })
      )
    ],
    [
      'compose: no functions loader',
      composeFunctionsProblems(
        changed(d, (c) => {
          delete c.compose.services['redis-functions']
        })
      )
    ],
    [
      'kubernetes: a setting the gateway does not have',
      kubernetesEnvNameProblems(
        changed(o, (objects) => {
          find(objects, 'ConfigMap').data.CACHE_TTL = '5'
        })
      )
    ],
    [
      'kubernetes: a value the gateway refuses',
      kubernetesConfigProblems(
        changed(o, (objects) => {
          data(objects).SHUTDOWN_GRACE_MS = '10 s'
        }),
        dockerfile
      )
    ],
    [
      'kubernetes: a setting 1.0.0 removed',
      kubernetesConfigProblems(
        changed(o, (objects) => {
          data(objects).UPSTREAM_ENV = 'production'
        }),
        dockerfile
      )
    ],
    [
      'kubernetes: a hub profile the image does not ship',
      kubernetesConfigProblems(
        changed(o, (objects) => {
          data(objects).UPSTREAM_PROFILE_FILE = 'deploy/profiles/nope.json'
        }),
        dockerfile
      )
    ],
    [
      "kubernetes: containerPort not the gateway's",
      kubernetesPortProblems(
        changed(o, (objects) => {
          container(objects).ports[0].containerPort = 8080
        }),
        dockerfile
      )
    ],
    [
      'kubernetes: PORT moved, the manifests not',
      kubernetesPortProblems(
        changed(o, (objects) => {
          find(objects, 'ConfigMap').data.PORT = '8080'
        }),
        dockerfile
      )
    ],
    [
      'kubernetes: METRICS_PORT moved, its containerPort not',
      kubernetesPortProblems(
        changed(o, (objects) => {
          find(objects, 'ConfigMap').data.METRICS_PORT = '9100'
        }),
        dockerfile
      )
    ],
    [
      'kubernetes: ingress to a port the gateway does not serve',
      kubernetesPortProblems(
        changed(o, (objects) => {
          find(objects, 'NetworkPolicy').spec.ingress[1].ports[0].port = 9100
        }),
        dockerfile
      )
    ],
    [
      'kubernetes: the Service targeting another port',
      kubernetesPortProblems(
        changed(o, (objects) => {
          find(objects, 'Service').spec.ports[0].targetPort = 8080
        }),
        dockerfile
      )
    ],
    [
      'kubernetes: a readiness probe on a route the gateway lacks',
      kubernetesProbeProblems(
        changed(o, (objects) => {
          container(objects).readinessProbe.httpGet.path = '/healthz'
        }),
        hasRoute
      )
    ],
    [
      'kubernetes: readiness probing liveness',
      kubernetesProbeProblems(
        changed(o, (objects) => {
          container(objects).readinessProbe.httpGet.path = '/health/live'
        }),
        hasRoute
      )
    ],
    [
      'kubernetes: terminationGracePeriodSeconds not above the pause and SHUTDOWN_GRACE_MS',
      kubernetesShutdownProblems(
        changed(o, (objects) => {
          find(objects, 'Deployment').spec.template.spec.terminationGracePeriodSeconds = 12
        }),
        dockerfile
      )
    ],
    [
      'kubernetes: SHUTDOWN_GRACE_MS raised past the grace period',
      kubernetesShutdownProblems(
        changed(o, (objects) => {
          find(objects, 'ConfigMap').data.SHUTDOWN_GRACE_MS = '30000'
        }),
        dockerfile
      )
    ],
    [
      'kubernetes: no preStop pause',
      kubernetesShutdownProblems(
        changed(o, (objects) => {
          delete container(objects).lifecycle
        }),
        dockerfile
      )
    ],
    [
      'kubernetes: the hub key written inline',
      kubernetesSecretProblems(
        changed(o, (objects) => {
          container(objects).env[0] = { name: 'UPSTREAM_API_KEY', value: 'k' }
        })
      )
    ],
    [
      'kubernetes: the hub key a variable of a Secret',
      kubernetesSecretProblems(
        changed(o, (objects) => {
          container(objects).env[0] = {
            name: 'UPSTREAM_API_KEY',
            valueFrom: { secretKeyRef: { name: 'customs-gateway-hub', key: 'api-key' } }
          }
        })
      )
    ],
    [
      'kubernetes: REDIS_URL_FILE outside the mounted Secrets',
      kubernetesSecretProblems(
        changed(o, (objects) => {
          const env: Array<{ name: string; value: string }> = container(objects).env
          const entry = env.find((e) => e.name === 'REDIS_URL_FILE')
          if (entry !== undefined) entry.value = '/etc/redis-url'
        })
      )
    ],
    [
      'kubernetes: the Redis Secret not mounted',
      kubernetesSecretProblems(
        changed(o, (objects) => {
          container(objects).volumeMounts = container(objects).volumeMounts.filter(
            (m: { name: string }) => m.name !== 'redis'
          )
        })
      )
    ],
    [
      'kubernetes: a login password file in the ConfigMap outside the mounted Secrets',
      kubernetesSecretProblems(
        changed(o, (objects) => {
          find(objects, 'ConfigMap').data.UPSTREAM_LOGIN_PASSWORD_FILE = '/etc/hub-password'
        })
      )
    ],
    [
      'kubernetes: a Secret with its values',
      kubernetesSecretProblems(
        changed(o, (objects) => {
          objects.push({
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { name: 's' },
            stringData: { url: 'redis://x' }
          })
        })
      )
    ],
    [
      'kubernetes: REDIS_URL with its password in the ConfigMap',
      kubernetesSecretProblems(
        changed(o, (objects) => {
          find(objects, 'ConfigMap').data.REDIS_URL = 'redis://gateway:pw@redis:6379'
        })
      )
    ],
    [
      'kubernetes: CLIENTS_FILE outside the mounted Secret',
      kubernetesSecretProblems(
        changed(o, (objects) => {
          container(objects).env.find((e: { name: string }) => e.name === 'CLIENTS_FILE').value =
            '/etc/clients.json'
        })
      )
    ],
    [
      'kubernetes: a writable root filesystem',
      kubernetesHardeningProblems(
        changed(o, (objects) => {
          container(objects).securityContext.readOnlyRootFilesystem = false
        })
      )
    ],
    [
      'kubernetes: one replica',
      kubernetesHardeningProblems(
        changed(o, (objects) => {
          find(objects, 'Deployment').spec.replicas = 1
        })
      )
    ],
    [
      'kubernetes: an autoscaler down to one',
      kubernetesHardeningProblems(
        changed(o, (objects) => {
          find(objects, 'HorizontalPodAutoscaler').spec.minReplicas = 1
        })
      )
    ],
    [
      'kubernetes: a disruption budget selecting nothing',
      kubernetesHardeningProblems(
        changed(o, (objects) => {
          find(objects, 'PodDisruptionBudget').spec.selector.matchLabels = { app: 'other' }
        })
      )
    ],
    [
      'kubernetes: service links on',
      kubernetesHardeningProblems(
        changed(o, (objects) => {
          delete find(objects, 'Deployment').spec.template.spec.enableServiceLinks
        })
      )
    ],
    [
      'kubernetes: no seccomp profile',
      kubernetesHardeningProblems(
        changed(o, (objects) => {
          delete find(objects, 'Deployment').spec.template.spec.securityContext.seccompProfile
        })
      )
    ],
    [
      'kubernetes: egress to another port',
      kubernetesNetworkProblems(
        changed(o, (objects) => {
          find(objects, 'NetworkPolicy').spec.egress.push({
            to: [{ ipBlock: { cidr: '198.51.100.0/24' } }],
            ports: [{ port: 22 }]
          })
        }),
        dockerfile
      )
    ],
    [
      'kubernetes: ingress to another port',
      kubernetesPortProblems(
        changed(o, (objects) => {
          find(objects, 'NetworkPolicy').spec.ingress[0].ports[0].port = 9000
        }),
        dockerfile
      )
    ],
    [
      'kubernetes: egress not restricted',
      kubernetesNetworkProblems(
        changed(o, (objects) => {
          find(objects, 'NetworkPolicy').spec.policyTypes = ['Ingress']
        }),
        dockerfile
      )
    ],
    [
      'kubernetes: the hub moved to a port the policy closes',
      kubernetesNetworkProblems(
        changed(o, (objects) => {
          find(objects, 'ConfigMap').data.UPSTREAM_HUB_URL = 'https://hub.example.go.id:8443'
        }),
        dockerfile
      )
    ],
    [
      'kubernetes: egress to the metadata service',
      kubernetesNetworkProblems(
        changed(base(), (objects) => {
          find(objects, 'NetworkPolicy').spec.egress[1].to[0].ipBlock.except = ['10.0.0.0/8']
        }),
        dockerfile
      )
    ]
  ]
  for (const [mistake, problems] of cases) {
    t.ok(problems.length > 0, `${mistake}: ` +
    `${problems[0] ?? 'NOT DETECTED'}`)
  }
})

/** REDIS_URL_FILE as compose.yaml gives it to the replicas: where it mounts secret redis-url. */
function composeRedisUrlFile (): string {
  const compose = interpolate(readCompose(path('deploy/compose.yaml')), {}) as ComposeFile
  const replica = compose.services['gateway-1'] as { environment: Record<string, string> }
  return String(replica.environment.REDIS_URL_FILE)
}

test('deploy/init-secrets.sh: one Redis password for Redis and the gateway, a least-privileged ' +
  'Redis user, nothing overwritten', async (t) => {
  const { dir, status, output } = initSecrets(t)
  t.equal(status, 0, 'the script succeeds', { output })
  t.equal(statSync(dir).mode & 0o777, 0o700, "the directory is the owner's alone")
  const files = [
    'redis-url',
    'redis-users.acl',
    'redis-functions-url',
    'hub-api-key',
    'hub-access-token',
    'hub-login-username',
    'hub-login-password',
    'clients.json'
  ]
  for (const file of files) {
    t.equal(
      statSync(join(dir, file)).mode & 0o777,
      0o644,
      `${file}: readable by the containers' users`
    )
  }
  const compose = interpolate(readCompose(path('deploy/compose.yaml')), {}) as ComposeFile
  t.same(
    Object.values(compose.secrets ?? {})
      .map((secret) => secret.file)
      .sort(),
    files.map((file) => `./secrets/${file}`).sort(),
    'every secret file compose.yaml mounts, and no other'
  )
  const url = new URL(readFileSync(join(dir, 'redis-url'), 'utf8').trim())
  const password = url.password
  t.match(password, /^[0-9a-f]{64}$/, 'a password of 32 random bytes')
  t.equal(
    `${url.protocol}//${url.username}@${url.host}`,
    'redis://gateway@redis:6379',
    'REDIS_URL names the compose service and the gateway user'
  )
  t.equal(
    composeRedisUrlFile(),
    '/run/secrets/redis-url',
    'compose.yaml gives it as REDIS_URL_FILE, the secret mounted'
  )
  t.equal(
    loadConfig({ REDIS_URL_FILE: join(dir, 'redis-url') }).REDIS_URL,
    url.href,
    'the gateway reads the address with its password from the file'
  )
  const acl = readFileSync(join(dir, 'redis-users.acl'), 'utf8')
  t.ok(
    acl.includes(`#${createHash('sha256').update(password).digest('hex')}`),
    "Redis holds the password's SHA-256, not the password"
  )
  t.notOk(acl.includes(password), 'and never the password itself')
  const prefix = String((ConfigSchema.properties.REDIS_KEY_PREFIX as { default?: unknown }).default)
  // The gateway uses no pub/sub channel since events moved to a stream: its user gets none.
  const gatewayUser = acl.split('\n').find((line) => line.startsWith('user gateway ')) ?? ''
  t.ok(
    gatewayUser.includes(` ~${prefix}* `) &&
      gatewayUser.includes(' resetchannels ') &&
      !gatewayUser.includes(' &'),
    `keys limited to REDIS_KEY_PREFIX (${prefix}), no channel`
  )
  const functionsUrl = new URL(readFileSync(join(dir, 'redis-functions-url'), 'utf8').trim())
  t.equal(
    `${functionsUrl.protocol}//${functionsUrl.username}@${functionsUrl.host}`,
    'redis://functions@redis:6379',
    "the loader's URL: the functions user"
  )
  t.ok(
    functionsUrl.password.length === 64 && functionsUrl.password !== url.password,
    'with a password of its own'
  )
  t.ok(
    acl.includes(`#${createHash('sha256').update(functionsUrl.password).digest('hex')}`),
    'hashed in the ACL file'
  )
  // Each user's rules are deploy/redis-users.rules' (which test/state/redis/acl.test.ts runs the
  // gateway under).
  const rules = redisUserRules(prefix)
  const lines = acl.trim().split('\n')
  t.same(
    lines.map((line) => line.split(' ')[1]),
    ['default', 'gateway', 'functions', 'replica', 'sentinel'],
    'the users; replica and sentinel for deploy/compose.sentinel.yaml'
  )
  for (const line of lines) {
    const [, user, , password, ...rest] = line.split(' ')
    t.equal(rest.join(' '), rules[user ?? ''], `${user}: the rules of deploy/redis-users.rules`)
    t.match(
      password,
      user === 'default' ? /^nopass$/ : /^#[0-9a-f]{64}$/,
      user === 'default' ? 'default: no password' : `${user}: a password's SHA-256`
    )
  }
  t.match(
    acl,
    /^user replica on #[0-9a-f]{64} resetkeys resetchannels -@all \+psync \+replconf \+ping$/m,
    'the replication user (compose.sentinel.yaml) may replicate and nothing else'
  )
  t.same(
    JSON.parse(readFileSync(join(dir, 'clients.json'), 'utf8')),
    [],
    'no client until one is added'
  )

  writeFileSync(join(dir, 'hub-api-key'), 'filled-in\n')
  t.equal(runInit(dir).status, 0, 'a second run')
  t.equal(
    new URL(readFileSync(join(dir, 'redis-url'), 'utf8').trim()).password,
    password,
    'keeps what exists'
  )
  t.equal(
    readFileSync(join(dir, 'hub-api-key'), 'utf8'),
    'filled-in\n',
    'what the operator wrote too'
  )
  rmSync(join(dir, 'redis-users.acl'))
  const half = runInit(dir)
  t.equal(half.status, 1, 'one of the three missing: refused')
  t.match(half.output, /exist without the others/)
  t.notOk(existsSync(join(dir, 'redis-users.acl')), 'and nothing written')

  // A deployment from before 1.0.0: the password alone in redis-password; the URL from it.
  const old = initSecrets(t)
  rmSync(join(old.dir, 'redis-url'))
  writeFileSync(join(old.dir, 'redis-password'), 'a'.repeat(64))
  t.equal(runInit(old.dir).status, 0)
  const derived = `redis://gateway:${'a'.repeat(64)}@redis:6379\n`
  t.equal(
    readFileSync(join(old.dir, 'redis-url'), 'utf8'),
    derived,
    'redis-url from an older redis-password'
  )

  const other = initSecrets(t, { REDIS_KEY_PREFIX: 'prod:cgw:' })
  t.ok(
    readFileSync(join(other.dir, 'redis-users.acl'), 'utf8').includes(' ~prod:cgw:* '),
    'REDIS_KEY_PREFIX given to the script: the ACL follows it'
  )
})

test("the ACL file init-secrets.sh writes, loaded by a real redis-server: the gateway's user is " +
  "let in with REDIS_URL's password and kept to its prefix", async (t) => {
  const { dir } = initSecrets(t)
  const server = await startRedisServer(t, { args: ['--aclfile', join(dir, 'redis-users.acl')] })
  // The file compose.yaml mounts as REDIS_URL_FILE, as the gateway reads it; the test's Redis.
  const address = new URL(loadConfig({ REDIS_URL_FILE: join(dir, 'redis-url') }).REDIS_URL ?? '')
  address.host = `127.0.0.1:${server.port}`
  const url = address.href
  const gateway = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 })
  // No ready check: it asks INFO, which the default user may not run.
  const anonymous = new Redis(server.port, '127.0.0.1', {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableReadyCheck: false
  })
  t.teardown(() => {
    gateway.disconnect()
    anonymous.disconnect()
  })
  await gateway.connect()
  t.equal(await gateway.set('cgw:deploy-check', '1'), 'OK', 'the gateway writes under its prefix')
  await t.rejects(gateway.get('other:key'), /NOPERM/, 'and nowhere else')
  await t.rejects(gateway.flushall(), /NOPERM/, 'nor runs a command it does not need')
  await anonymous.connect()
  t.equal(await anonymous.ping(), 'PONG', "the health check's PING needs no password")
  await t.rejects(anonymous.get('cgw:deploy-check'), /NOPERM/, 'but nothing else does')
  await t.rejects(
    anonymous.call('AUTH', 'gateway', 'not-the-password'),
    /WRONGPASS/,
    'another password is refused'
  )

  // The one-shot loader of compose.yaml, with the secret file it mounts (the host moved to this
  // server).
  const functionsUrl = new URL(readFileSync(join(dir, 'redis-functions-url'), 'utf8').trim())
  functionsUrl.host = `127.0.0.1:${server.port}`
  const urlFile = join(dir, 'redis-functions-url.local')
  writeFileSync(urlFile, `${functionsUrl.href}\n`)
  const loader = () => redisFunctions('--load', urlFile)
  const first = loader()
  t.equal(first.status, 0, first.stderr)
  t.equal(first.stdout, `loaded the gateway's Redis function library ${FUNCTION_LIBRARY.name}\n`)
  t.equal(
    loader().stdout,
    `already loaded: the gateway's Redis function library ${FUNCTION_LIBRARY.name}\n`,
    'a second up leaves it as it is'
  )
  t.notMatch(`${first.stdout}${first.stderr}`, functionsUrl.password, 'the password is not printed')
  t.same(
    await gateway.call('FCALL', `${FUNCTION_LIBRARY.name}_stateClaim`, 1, 'cgw:claimed', 'v', 1000),
    [1],
    'the gateway calls its functions'
  )
  await t.rejects(
    gateway.call('FUNCTION', 'LOAD', FUNCTION_LIBRARY.code),
    /NOPERM/,
    'but may not load any'
  )
  const wrong = join(dir, 'wrong-url')
  const gatewayPassword = new URL(readFileSync(join(dir, 'redis-url'), 'utf8').trim()).password
  writeFileSync(wrong, `redis://gateway:${gatewayPassword}@127.0.0.1:${server.port}\n`)
  const refused = redisFunctions('--load', wrong)
  t.equal(refused.status, 1, "the gateway's own URL cannot load it")
  t.match(
    refused.stderr,
    /^redis-functions: could not load the function library customs_gateway_[0-9a-f]{12}: NOPERM/
  )
  t.notMatch(refused.stderr, gatewayPassword)
})

test("redis-functions prints the library for an administrator's redis-cli, and says how it is " +
  'used', async (t) => {
  const printed = redisFunctions()
  t.equal(printed.status, 0)
  t.equal(printed.stdout, FUNCTION_LIBRARY.code, 'the library, as FUNCTION LOAD takes it')
  t.match(printed.stdout, new RegExp(`^#!lua name=${FUNCTION_LIBRARY.name}\n`))
  const wrong = redisFunctions('--reload')
  t.equal(wrong.status, 1)
  t.equal(
    wrong.stderr,
    'redis-functions: usage: redis-functions [--load FILE]   (FILE: a redis:// URL of a user ' +
    'allowed FUNCTION LIST and LOAD)\n'
  )
  const missing = redisFunctions('--load', '/nonexistent/redis-url')
  t.equal(missing.stderr, 'redis-functions: cannot read /nonexistent/redis-url: ENOENT\n')
  const dir = mkdtempSync(join(tmpdir(), 'gateway-functions-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'url'), 'http://functions:secret@redis:6379\n')
  const notRedis = redisFunctions('--load', join(dir, 'url'))
  t.equal(
    notRedis.stderr,
    `redis-functions: ${join(dir, 'url')} does not hold a redis:// or rediss:// URL\n`,
    'the URL itself is not printed'
  )
})
