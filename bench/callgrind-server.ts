// `node <dir>/dist/… bench/callgrind-server.ts <dir>`: the gateway built into <dir>/dist, as
// server.ts makes it (pino with the gateway's options, its Fastify options, the gateway
// plugin, listening on HOST:PORT) but without Fastify's plugin timeout: under callgrind a
// plugin's start-up takes more than its default 10 s. Used by bench/instructions.ts only.
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { FastifyPluginAsync, FastifyServerOptions } from 'fastify'

type AppModule = {
  default: FastifyPluginAsync<{ config: unknown, sandbox: boolean }>
  loggerOptions (config: unknown): object
  serverOptions (config: unknown, logger: unknown): FastifyServerOptions
}

const base = resolve(process.argv[2] ?? '.')
const load = async <T>(path: string): Promise<T> =>
  await import(pathToFileURL(resolve(base, 'dist', path)).href) as T
const { default: Fastify } = await load<{ default: typeof import('fastify').default }>(
  '../node_modules/fastify/fastify.js')
const { default: pino } = await load<{ default: typeof import('pino').default }>(
  '../node_modules/pino/pino.js')
const app = await load<AppModule>('app.js')
const { loadConfig } = await load<{ loadConfig (env: NodeJS.ProcessEnv): unknown }>(
  'config/load.js')
const { resolveConfig } = await load<{ resolveConfig (env: NodeJS.ProcessEnv): unknown }>(
  'config/resolve.js')

const config = loadConfig(process.env)
const server = Fastify({
  ...app.serverOptions(config, pino(app.loggerOptions(config))),
  pluginTimeout: 0
})
await server.register(app.default, { config: resolveConfig(process.env), sandbox: false })
await server.listen({ port: Number(process.env.PORT), host: process.env.HOST ?? '127.0.0.1' })
// A clean exit on SIGTERM, so that --cpu-prof writes its profile.
process.once('SIGTERM', () => { server.close().then(() => process.exit(0), () => process.exit(1)) })
