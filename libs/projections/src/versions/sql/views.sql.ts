import type { SqlQuery } from '@ordinal/pg';
import { quoteIdent } from '../version-names.js';

/**
 * DDL of the read side. Identifiers cannot be parameters: every schema and table name here
 * comes from a build row this library wrote (`[a-z0-9_]` schemas, entity table names) and is
 * quoted; a comment is a quoted literal (COMMENT takes no parameters).
 */

/** What a name in the default schema is: a base table, a view, or nothing. */
export function readRelationKinds(tables: string[]): SqlQuery {
  return {
    text: `SELECT c.relname AS name, c.relkind AS kind FROM pg_class c
            WHERE c.relnamespace = current_schema()::regnamespace AND c.relname = ANY($1::text[])`,
    values: [tables],
  };
}

export function createSchema(schema: string, comment: string): SqlQuery[] {
  return [
    { text: `CREATE SCHEMA IF NOT EXISTS ${quoteIdent(schema)}`, values: [] },
    { text: `COMMENT ON SCHEMA ${quoteIdent(schema)} IS ${literal(comment)}`, values: [] },
  ];
}

/** Moves a first build's table out of the default schema into its own (metadata only, no copy). */
export function moveTable(table: string, schema: string): SqlQuery {
  return { text: `ALTER TABLE ${quoteIdent(table)} SET SCHEMA ${quoteIdent(schema)}`, values: [] };
}

/** Points the view named after a read-model table at a build's table (one transaction switches all). */
export function pointView(table: string, schema: string, comment: string): SqlQuery[] {
  return [
    { text: `DROP VIEW IF EXISTS ${quoteIdent(table)}`, values: [] },
    {
      text: `CREATE VIEW ${quoteIdent(table)} AS SELECT * FROM ${quoteIdent(schema)}.${quoteIdent(table)}`,
      values: [],
    },
    { text: `COMMENT ON VIEW ${quoteIdent(table)} IS ${literal(comment)}`, values: [] },
  ];
}

/** A new build's table shaped like the serving one (columns, defaults, constraints, indexes). */
export function createTableLike(table: string, schema: string, from: string): SqlQuery {
  return {
    text: `CREATE TABLE IF NOT EXISTS ${quoteIdent(schema)}.${quoteIdent(table)} (LIKE ${quoteIdent(from)}.${quoteIdent(table)} INCLUDING ALL)`,
    values: [],
  };
}

/**
 * Columns of a table whose default draws from a sequence (serial): a table made LIKE another
 * would share that sequence, and dropping the other's schema would drop the default too.
 */
export function readSequenceDefaults(schema: string, table: string): SqlQuery {
  return {
    text: `SELECT a.attname AS column FROM pg_attrdef d
             JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
            WHERE d.adrelid = to_regclass($1) AND pg_get_expr(d.adbin, d.adrelid) LIKE 'nextval(%'`,
    values: [`${quoteIdent(schema)}.${quoteIdent(table)}`],
  };
}

/** Gives a serial column of a build's table a sequence of its own, in the build's schema. */
export function ownSequence(schema: string, table: string, column: string): SqlQuery[] {
  const sequence = `${quoteIdent(schema)}.${quoteIdent(`${table}_${column}_seq`.slice(0, 63))}`;
  const qualified = `${quoteIdent(schema)}.${quoteIdent(table)}`;
  return [
    {
      text: `CREATE SEQUENCE IF NOT EXISTS ${sequence} OWNED BY ${qualified}.${quoteIdent(column)}`,
      values: [],
    },
    {
      text: `ALTER TABLE ${qualified} ALTER COLUMN ${quoteIdent(column)} SET DEFAULT nextval(${literal(sequence)}::regclass)`,
      values: [],
    },
  ];
}

/** Drops a retired build's tables: exactly its schema. */
export function dropSchema(schema: string): SqlQuery {
  return { text: `DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`, values: [] };
}

/** The transaction's search_path: the build's schema first, so unqualified table names land in it. */
export function setSearchPath(schema: string): SqlQuery {
  return {
    text: `SELECT set_config('search_path', $1, true)`,
    values: [`${quoteIdent(schema)}, public`],
  };
}

/** A string literal for COMMENT (which takes no parameters); standard_conforming_strings is on. */
function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
