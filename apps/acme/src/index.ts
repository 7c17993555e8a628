export * from './orders/index.js';
