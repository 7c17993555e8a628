export * from './orders/index.js';
export * from './billing/index.js';
export * from './notifications/index.js';
export * from './dashboard/index.js';
