export * from './stream-event-json.js';
export * from './read-stream-events.sql.js';
export * from './read-stream-version.sql.js';
export * from './read-stream-slice.sql.js';
export * from './save-snapshot.sql.js';
export * from './read-snapshot.sql.js';
