export * from './log-feed.js';
export * from './live-router.service.js';
export { compileFilter } from './feed-filter.js';
