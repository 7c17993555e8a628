export * from './invalid-projection.error.js';
export * from './projection-version-not-found.error.js';
export * from './projection-version-conflict.error.js';
export * from './tenant-wall-unavailable.error.js';
