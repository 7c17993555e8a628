export * from './snapshot-version-exceeds-stream.error.js';
export * from './invalid-stream-id.error.js';
export * from './aggregate-not-found.error.js';
export * from './unknown-event-type.error.js';
export * from './missing-upcaster.error.js';
export * from './invalid-aggregate.error.js';
export * from './invalid-upcaster.error.js';
export * from './invalid-version.error.js';
// A stream's lifecycle errors are the log's (its writer raises them); named here for domain code.
export { StreamDeletedError, StreamTombstonedError, StreamNotFoundError } from '@ordinal/log';
