import type { SqlQuery } from '@ordinal/pg';

/** The tenant of a subject's name `s` (`tenantSubjectHash`: `<tenant>/<hash>`), NULL for none. */
const TENANT_OF_SUBJECT = `CASE WHEN strpos(s, '/') > 0 THEN split_part(s, '/', 1) END`;

/** The key store's tables in `schema` (a validated identifier, never input). */
export const keyStoreTables = (schema: string) => ({
  keys: `${schema}.subject_keys`,
  check: `${schema}.master_key_check`,
});

/**
 * The key store's schema, made at start where it lives (its own schema of the log's database,
 * or another database: the log's migrations cannot reach that one), idempotent, with its
 * comments. Run under an advisory lock so two starting processes do not race.
 */
export function createKeyStore(schema: string): string[] {
  const t = keyStoreTables(schema);
  return [
    `SELECT pg_advisory_xact_lock(${0x4f5244_20})`,
    `CREATE SCHEMA IF NOT EXISTS ${schema}`,
    `CREATE TABLE IF NOT EXISTS ${t.keys} (
       subject_hash text PRIMARY KEY,
       wrapped_key bytea,
       created_at timestamptz NOT NULL DEFAULT now(),
       destroyed_at timestamptz,
       CHECK ((wrapped_key IS NULL) = (destroyed_at IS NOT NULL)))`,
    // Tenants (docs/tenants.md#deleting-a-tenant): a tenant's subjects' keys, destroyed together.
    `ALTER TABLE ${t.keys} ADD COLUMN IF NOT EXISTS tenant text`,
    `CREATE INDEX IF NOT EXISTS subject_keys_tenant_ix ON ${t.keys} (tenant) WHERE tenant IS NOT NULL`,
    `CREATE TABLE IF NOT EXISTS ${t.check} (
       id int PRIMARY KEY CHECK (id = 1),
       sealed bytea NOT NULL,
       created_at timestamptz NOT NULL DEFAULT now())`,
    `COMMENT ON SCHEMA ${schema} IS 'Ordinal personal-data key store (docs/personal-data.md): one data key per subject, wrapped by the master key. Kept apart from the log: a key restored with a backup un-forgets a person.'`,
    `COMMENT ON TABLE ${t.keys} IS 'One AES-256 data key per subject of personal data, wrapped (AES-256-GCM) by the master key. An erased subject keeps its row with the key destroyed.'`,
    `COMMENT ON COLUMN ${t.keys}.subject_hash IS 'SHA-256 (hex) of the subject id; the id itself is never stored here.'`,
    `COMMENT ON COLUMN ${t.keys}.wrapped_key IS 'The data key wrapped by the master key (version, IV, tag, ciphertext); NULL once destroyed by an erasure.'`,
    `COMMENT ON COLUMN ${t.keys}.created_at IS 'When the key was made (the subject''s first personal message).'`,
    `COMMENT ON COLUMN ${t.keys}.tenant IS 'The tenant of the subject (its subject_hash is then <tenant>/<hash>), NULL for a subject of no tenant: deleting a tenant destroys all its keys.'`,
    `COMMENT ON COLUMN ${t.keys}.destroyed_at IS 'When an erasure destroyed the key (NULL while it exists).'`,
    `COMMENT ON TABLE ${t.check} IS 'A constant sealed by the master key the store was made with: a start with another master key fails instead of decrypting garbage.'`,
    `COMMENT ON COLUMN ${t.check}.id IS 'Always 1: one row.'`,
    `COMMENT ON COLUMN ${t.check}.sealed IS 'The check constant sealed under the master key.'`,
    `COMMENT ON COLUMN ${t.check}.created_at IS 'When the store was made.'`,
  ];
}

/** The check value, made once (the first start's master key wins). */
export function ensureCheck(schema: string, sealed: Buffer): SqlQuery {
  const { check } = keyStoreTables(schema);
  return {
    text: `WITH made AS (INSERT INTO ${check} (id, sealed) VALUES (1, $1) ON CONFLICT (id) DO NOTHING RETURNING sealed)
           SELECT sealed FROM made UNION ALL SELECT sealed FROM ${check} WHERE id = 1 LIMIT 1`,
    values: [sealed],
  };
}

/** A subject key row as the store holds it. */
export interface SubjectKeyRow {
  subject_hash: string;
  wrapped_key: Buffer | null;
}

/** The rows of these subjects (absent: no key yet). */
export function readKeys(schema: string, subjects: string[]): SqlQuery {
  return {
    text: `SELECT subject_hash, wrapped_key FROM ${keyStoreTables(schema).keys} WHERE subject_hash = ANY($1::text[])`,
    values: [subjects],
  };
}

/**
 * Makes the keys of subjects that have none (first use); a concurrent maker wins and its row is
 * returned, as is a destroyed one (the caller refuses the append).
 */
export function createKeys(schema: string, subjects: string[], wrapped: Buffer[]): SqlQuery {
  const { keys } = keyStoreTables(schema);
  return {
    text: `WITH made AS (
             INSERT INTO ${keys} (subject_hash, wrapped_key, tenant)
             SELECT s, w, ${TENANT_OF_SUBJECT} FROM unnest($1::text[], $2::bytea[]) AS u(s, w)
             ON CONFLICT (subject_hash) DO NOTHING
             RETURNING subject_hash, wrapped_key)
           SELECT subject_hash, wrapped_key FROM made
           UNION ALL
           SELECT subject_hash, wrapped_key FROM ${keys}
           WHERE subject_hash = ANY($1::text[]) AND subject_hash NOT IN (SELECT subject_hash FROM made)`,
    values: [subjects, wrapped],
  };
}

/** Destroys the keys of these subjects (a row is kept, key NULL, so no new key is ever made). */
export function destroyKeys(schema: string, subjects: string[]): SqlQuery {
  const { keys } = keyStoreTables(schema);
  return {
    text: `INSERT INTO ${keys} (subject_hash, wrapped_key, destroyed_at, tenant)
           SELECT s, NULL, now(), ${TENANT_OF_SUBJECT} FROM unnest($1::text[]) AS s
           ON CONFLICT (subject_hash) DO UPDATE SET wrapped_key = NULL, destroyed_at = coalesce(${keys}.destroyed_at, now())
           RETURNING subject_hash`,
    values: [subjects],
  };
}

/**
 * Destroys every key of a tenant's subjects (a tenant's deletion, docs/tenants.md): rows kept,
 * keys NULL, so none is made again. Returns the subjects whose key it destroyed now.
 */
export function destroyTenantKeys(schema: string, tenant: string): SqlQuery {
  const { keys } = keyStoreTables(schema);
  return {
    // A SELECT over the UPDATE: its rows come back as rows on either connection.
    text: `WITH destroyed AS (
             UPDATE ${keys} SET wrapped_key = NULL, destroyed_at = now()
             WHERE tenant = $1 AND wrapped_key IS NOT NULL
             RETURNING subject_hash)
           SELECT subject_hash FROM destroyed`,
    values: [tenant],
  };
}
