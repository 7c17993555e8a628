export * from './invalid-message.error.js';
export * from './writer-overloaded.error.js';
export * from './writer-closed.error.js';
export * from './version-conflict.error.js';
export * from './import-line.error.js';
export * from './log-full.error.js';
export * from './import-idle.error.js';
