export * from './checkpoint.sql.js';
export * from './skipped.sql.js';
