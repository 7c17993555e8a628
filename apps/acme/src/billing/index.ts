export * from './billing-consumer.js';
