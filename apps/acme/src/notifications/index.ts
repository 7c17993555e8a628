export * from './notifications-consumer.js';
