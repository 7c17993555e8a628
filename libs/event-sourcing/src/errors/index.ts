export * from './snapshot-version-exceeds-stream.error.js';
export * from './invalid-stream-id.error.js';
export * from './aggregate-not-found.error.js';
export * from './unknown-event-type.error.js';
export * from './missing-upcaster.error.js';
export * from './invalid-aggregate.error.js';
export * from './invalid-upcaster.error.js';
export * from './invalid-version.error.js';
