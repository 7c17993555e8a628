// The public door of @ordinal/log. What only sibling libraries use is in ./internal.ts.
export * from './errors/index.js';
export * from './message.js';
export type { LogModuleOptions, LogRole, Ordering } from './log-options.js';
export { START_MARKER_TYPE, SYSTEM_USER } from './log.constants.js';
export * from './log.module.js';
export * from './writer/log-writer.service.js';
export * from './import/log-importer.service.js';
export * from './reader/log-reader.service.js';
export * from './watermark/log-watermark.service.js';
export * from './router/log-feed.js';
export * from './router/live-router.service.js';
export * from './log-lifecycle.service.js';
export * from './shard.js';
export { RenderedMessage, renderedJson } from './row-mapper.js';
export * from './trace/index.js';
