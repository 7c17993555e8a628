export * from './client-types.js';
export * from './ordinal-client.js';
export * from './ordinal-http.error.js';
export * from './pull-consumer.js';
export * from './bookmark.js';
export * from './backoff.js';
export { openEventStream, streamQuery, type StreamOptions } from './event-stream.js';
export { SseParser, decodeSseEvent, type RawSseEvent } from './sse-parser.js';
export { murmur3_32, shardOf, DEVELOPMENT_TOKEN, isTombstone } from '@ordinal/contract';
export {
  ORDINAL_ERROR_CODES,
  HTTP_ERROR_CODES,
  type ErrorCode,
  type OrdinalErrorCode,
  type HttpErrorCode,
} from '@ordinal/contract';
export { ConsumerGroupMember, type ConsumerGroupOptions } from './consumer-group.js';
export type { SegmentInfo, SegmentsResponse, TenantDeletion } from '@ordinal/contract';
export type {
  GroupDelivery,
  GroupFetchResponse,
  GroupSettleResponse,
  GroupSseEvent,
} from '@ordinal/contract';
