/** `@ordinal/amqp/internal`: for Ordinal's server and tests only; not a public API. */
export { AMQP_TABLES } from './amqp.constants.js';
export { AMQP_MODULE_OPTIONS, AMQP_RAW_OPTIONS } from './amqp.module-definition.js';
export { resolveAmqpOptions, type ResolvedAmqpOptions } from './amqp-options.js';
export { backoffDelay, type BackoffPolicy } from './connection/backoff.js';
export { parseInputMessage, type ParsedInput } from './input/input-message.parser.js';
export { parseAckMessage, type InterfaceAck } from './interfaces/ack-message.parser.js';
export { AMQP_MIGRATIONS } from './migrations/index.js';
export { inputQueueArguments, baseArguments } from './topology/queue-arguments.js';
