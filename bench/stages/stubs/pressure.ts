// Stage `load-shedding`: @fastify/under-pressure not registered.
import fp from 'fastify-plugin'

export default fp(async () => {}, { name: 'pressure' })
