export * from './checkpoint.sql.js';
export * from './parked.sql.js';
export * from './directory.sql.js';
export * from './requests.sql.js';
