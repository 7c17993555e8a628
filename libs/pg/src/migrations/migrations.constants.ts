/** The one table every migration run records in, Ordinal's and a user's alike. */
export const MIGRATIONS_TABLE = 'ordinal_migrations';

/** Advisory lock key (a bigint) that serialises migration runs across processes. */
export const MIGRATION_LOCK = 0x4f5244_02;
