export * from './checkpoint.sql.js';
export * from './parked.sql.js';
