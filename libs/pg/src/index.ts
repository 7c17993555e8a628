/**
 * `@ordinal/pg`: the PostgreSQL core every Ordinal library stands on. The SQL executor that
 * shares a caller's transaction, the predicates that classify pg errors, the migrations runner
 * (one transaction, one advisory lock, one record table), the rules for JSON and text that
 * PostgreSQL can store exactly, and the base `OrdinalError`. No Nest module, no state.
 */
export * from './errors/index.js';
export * from './sql-query.js';
export * from './pg-errors.js';
export * from './position.js';
export * from './migrations/run-migrations.js';
export * from './migrations/migration-set.js';
export * from './migrations/read-applied-migrations.sql.js';
export * from './migrations/migrations.constants.js';
export * from './migrations/describe-schema.js';
export * from './json/json-rules.js';
export * from './json/exact-numbers.js';
export * from './json/jsonb-text.js';
export * from './options/number-option.js';
export * from './options/connection-url.js';
export * from './database/create-database.js';
