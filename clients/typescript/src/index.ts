export {
  createGatewayClient,
  newIdempotencyKey,
  type Call,
  type CallInit,
  type ErrorEnvelope,
  type GatewayClient,
  type GatewayClientOptions,
  type PathsWith
} from './client.ts'
export {
  EventSocketError,
  subscribeEvents,
  type BookedEvent,
  type EventSubscription,
  type GatewayEvent,
  type ReconnectOptions,
  type StreamReload,
  type SubscribeEventsOptions,
  type WebSocketConstructorLike,
  type WebSocketLike
} from './events.ts'
export type { components, operations, paths } from './openapi.ts'
