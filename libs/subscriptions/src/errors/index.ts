export * from './wait-timeout.error.js';
export * from './subscription-not-found.error.js';
export * from './duplicate-subscription.error.js';
export * from './handler-failed.error.js';
export * from './checkpoint-moved.error.js';
export * from './consumer-not-running.error.js';
export * from './consumer-request-failed.error.js';
