export * from './register-consumers.sql.js';
export * from './heartbeat.sql.js';
export * from './read-ownership.sql.js';
export * from './claim-leases.sql.js';
export * from './release-lease.sql.js';
export * from './fence-lease.sql.js';
export * from './cleanup.sql.js';
