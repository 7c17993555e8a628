export * from './amqp-unavailable.error.js';
export * from './queue-mismatch.error.js';
export * from './interface-config.error.js';
