export * from './ordinal.error.js';
export * from './database-unavailable.error.js';
export * from './migration-failed.error.js';
export * from './read-only-replica.error.js';
export * from './storage-full.error.js';
export * from './database-missing.error.js';
