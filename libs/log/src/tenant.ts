/**
 * Tenants (docs/tenants.md): conjoined, in one log. A tenant's message carries its tenant id, and
 * every per-tenant name it has — its stream id, its category, its idempotency key — is stored
 * *qualified*: `<tenant>/<name>`. Every per-stream and per-category table (heads, states,
 * retention, snapshots, archived chunks, category locks) and the idempotency keys' uniqueness
 * are therefore per tenant without a second key column, and without changing the functions that
 * keep them. Readers get the plain names and the `tenant` field: the row mapper and the SQL
 * rendering strip the qualifier (`PLAIN_STREAM_ID`).
 *
 * A tenant id has neither `/` (the qualifier's separator, never in a stream id) nor `-` (a
 * stream's category is the text before its first `-`, in TypeScript and in SQL).
 */
export const TENANT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.]{0,62}$/;

/** Whether `value` is a tenant id (`TENANT_PATTERN`). */
export function isTenantId(value: unknown): value is string {
  return typeof value === 'string' && TENANT_PATTERN.test(value);
}

/** The stored form of a tenant's name (stream id, category, idempotency key): `<tenant>/<name>`. */
export function qualify(tenant: string | null | undefined, name: string): string {
  return tenant == null ? name : `${tenant}/${name}`;
}

/** The name a tenant's reader gets for a stored, qualified one (`qualify`'s inverse). */
export function unqualify(tenant: string | null | undefined, stored: string): string {
  return tenant == null ? stored : stored.slice(tenant.length + 1);
}

/** `unqualify` for a nullable column. */
export function unqualified<T extends string | null>(
  tenant: string | null | undefined,
  stored: T,
): T {
  return (stored === null ? null : unqualify(tenant, stored)) as T;
}

/**
 * SQL of a stored name column's plain form for the row's tenant (`unqualify`): the column as it
 * is for a row without a tenant. `column` is a constant of the code, never input.
 */
export function plainSql(column: string, tenant = 'tenant'): string {
  if (!/^[a-z_.]+$/.test(column) || !/^[a-z_.]+$/.test(tenant))
    throw new TypeError(`Bad column ${column}`);
  return `CASE WHEN ${tenant} IS NULL THEN ${column} ELSE substr(${column}, length(${tenant}) + 2) END`;
}

/** The plain stream id of a messages row (its stored `stream_id` less the tenant's qualifier). */
export const PLAIN_STREAM_ID = plainSql('stream_id');

/**
 * The role a tenant's session reads as (docs/tenants.md): PostgreSQL's row-level security shows
 * it only the rows of the tenant its session names (`TENANT_SETTING`), none without one. The
 * server's reads for a tenant's principal switch to it inside their transaction.
 */
export const TENANT_ROLE = 'ordinal_tenant';

/** The setting naming a session's tenant (`SET ordinal.tenant = 'acme'`, or `set_config`). */
export const TENANT_SETTING = 'ordinal.tenant';

/**
 * The row-level security predicate of a tenant's rows in a table with a tenant column: a session
 * that names a tenant sees only that tenant's rows, whatever its role; the role `TENANT_ROLE`
 * sees nothing without one; any other role naming none sees every row. (A table's owner and
 * superusers are not subject to row-level security at all, unless the table forces it.)
 */
export function tenantPredicate(column = 'tenant'): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(column)) throw new TypeError(`Bad column ${column}`);
  return `${column} = current_setting('${TENANT_SETTING}', true)
    OR (current_user <> '${TENANT_ROLE}' AND coalesce(current_setting('${TENANT_SETTING}', true), '') = '')`;
}

/**
 * The statements that put `table` (a tenant's read model, or the log) behind the tenant wall:
 * row-level security on, one policy (`tenantPredicate`, for reads and writes), and `privileges`
 * granted to `TENANT_ROLE`. Run them in a migration; `table` and `column` are identifiers of
 * your schema (checked: lower-case letters, digits and `_`, optionally schema-qualified).
 */
export function tenantIsolationSql(
  table: string,
  options: { column?: string; privileges?: string } = {},
): string[] {
  if (!/^([a-z_][a-z0-9_]*\.)?[a-z_][a-z0-9_]*$/.test(table))
    throw new TypeError(`Bad table name ${table}`);
  const privileges = options.privileges ?? 'SELECT, INSERT, UPDATE, DELETE';
  if (!/^[A-Z, ]+$/.test(privileges)) throw new TypeError(`Bad privileges ${privileges}`);
  const policy = `${table.replace('.', '_')}_tenant_isolation`;
  return [
    `ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`,
    `CREATE POLICY ${policy} ON ${table} USING (${tenantPredicate(options.column)})`,
    `GRANT ${privileges} ON ${table} TO ${TENANT_ROLE}`,
  ];
}

/**
 * Creates `TENANT_ROLE` when it does not exist (roles belong to the whole PostgreSQL cluster: a
 * second database's migration finds it). Without the privilege to create roles it only says
 * so: the log then has no second wall, and the server filters tenants by its queries alone
 * (it logs a warning at start).
 */
export const CREATE_TENANT_ROLE = `DO $do$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${TENANT_ROLE}') THEN
    BEGIN
      CREATE ROLE ${TENANT_ROLE} NOLOGIN;
    EXCEPTION
      WHEN duplicate_object OR unique_violation THEN NULL;
      WHEN insufficient_privilege THEN
        RAISE NOTICE 'ordinal: no privilege to create the role ${TENANT_ROLE}; tenants have no row-level security wall (docs/tenants.md)';
    END;
  END IF;
END
$do$`;
