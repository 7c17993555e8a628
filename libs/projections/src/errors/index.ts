export * from './invalid-projection.error.js';
