// The public door of @ordinal/amqp. What only sibling libraries and the server use is in ./internal.ts.
export * from './errors/index.js';
export { HEADERS, rejectedQueueOf, sinkQueueOf, ackQueueOf } from './amqp.constants.js';
export type { AmqpModuleOptions } from './amqp-options.js';
export * from './amqp.module.js';
export * from './connection/amqp-connection.service.js';
export * from './input/input-consumer.service.js';
export * from './input/dead-letters.service.js';
export * from './interfaces/interface-config.js';
export * from './interfaces/interface-config.loader.js';
export * from './interfaces/interface-status.js';
export * from './interfaces/push-interfaces.service.js';
export * from './bookmarks/bookmark-tracker.js';
export * from './bookmarks/bookmark-store.service.js';
