export * from './app.module.js';
export * from './create-app.js';
export * from './config/ordinal-config.js';
export * from './database/prepare-database.js';
