export * from './ordinal.error.js';
export * from './database-unavailable.error.js';
export * from './invalid-message.error.js';
export * from './writer-overloaded.error.js';
export * from './writer-closed.error.js';
export * from './version-conflict.error.js';
export * from './migration-failed.error.js';
export * from './ownership-lost.error.js';
