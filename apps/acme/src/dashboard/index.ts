export * from './order-dashboard.entity.js';
export * from './order-dashboard.projection.js';
export * from './dashboard.module.js';
