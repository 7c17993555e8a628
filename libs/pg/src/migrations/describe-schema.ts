import type { QueryRunner } from 'typeorm';

/** A table's comment and one for each of its columns. */
export interface TableDescription {
  comment: string;
  columns: Record<string, string>;
}

/** A quoted SQL string literal (COMMENT ON takes no parameters; the texts are the migration's own). */
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;
/** A quoted identifier (the names are the migration's own). */
const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Sets `COMMENT ON` for tables, their columns and sequences, so a DBA looking at the schema
 * (`\d+` in psql, any database tool) sees what each is for. For migrations: the texts and
 * names are constants of the migration, never input.
 */
export async function describeSchema(
  queryRunner: QueryRunner,
  tables: Record<string, TableDescription>,
  sequences: Record<string, string> = {},
): Promise<void> {
  for (const [table, { comment, columns }] of Object.entries(tables)) {
    await queryRunner.query(`COMMENT ON TABLE ${ident(table)} IS ${literal(comment)}`);
    for (const [column, text] of Object.entries(columns))
      await queryRunner.query(
        `COMMENT ON COLUMN ${ident(table)}.${ident(column)} IS ${literal(text)}`,
      );
  }
  for (const [sequence, comment] of Object.entries(sequences))
    await queryRunner.query(`COMMENT ON SEQUENCE ${ident(sequence)} IS ${literal(comment)}`);
}

/** Removes what `describeSchema` set (a migration's `down`). */
export async function forgetSchemaDescriptions(
  queryRunner: QueryRunner,
  tables: Record<string, TableDescription>,
  sequences: Record<string, string> = {},
): Promise<void> {
  for (const [table, { columns }] of Object.entries(tables)) {
    await queryRunner.query(`COMMENT ON TABLE ${ident(table)} IS NULL`);
    for (const column of Object.keys(columns))
      await queryRunner.query(`COMMENT ON COLUMN ${ident(table)}.${ident(column)} IS NULL`);
  }
  for (const sequence of Object.keys(sequences))
    await queryRunner.query(`COMMENT ON SEQUENCE ${ident(sequence)} IS NULL`);
}

/**
 * Pins a function's search_path to the schema the migration runs in (then pg_catalog), so its
 * unqualified table names find Ordinal's tables whatever the caller's search_path, and sets
 * its comment (when given). `signature` (`name(argtype, …)`) and `comment` are the migration's own.
 */
export async function pinFunction(
  queryRunner: QueryRunner,
  signature: string,
  comment?: string,
): Promise<void> {
  await queryRunner.query(
    `SELECT set_config('ordinal.migration_schema', current_schema(), true),
            set_config('ordinal.migration_function', $1, true)`,
    [signature],
  );
  await queryRunner.query(`DO $do$ BEGIN
      EXECUTE format('ALTER FUNCTION %s SET search_path = %I, pg_catalog',
                     current_setting('ordinal.migration_function'), current_setting('ordinal.migration_schema'));
    END $do$`);
  if (comment !== undefined)
    await queryRunner.query(`COMMENT ON FUNCTION ${signature} IS ${literal(comment)}`);
}
