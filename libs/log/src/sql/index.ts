export * from './sql-query.js';
export * from './lock-log.sql.js';
export * from './read-write-state.sql.js';
export * from './insert-messages.sql.js';
export * from './read-page.sql.js';
export * from './read-message.sql.js';
export * from './read-head.sql.js';
export * from './latest-hashes.sql.js';
