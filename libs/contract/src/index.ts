/**
 * `@ordinal/contract`: every shape that crosses a boundary (the wire, a package), defined
 * once. The server, the libraries and the client derive from these or are checked against
 * them when they compile. No dependencies, so a browser bundle or another runtime can use it.
 */
export * from './shard.js';
export * from './message.js';
export * from './error-codes.js';
export * from './sse-events.js';
export * from './development.js';
export * from './consumer-groups.js';
export * from './segments.js';
export * from './tenants.js';
