export * from './checkpoint.sql.js';
