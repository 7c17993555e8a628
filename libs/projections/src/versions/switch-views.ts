import { execute } from '@ordinal/pg';
import type { EntityManager } from 'typeorm';
import type { BuildRow } from './sql/builds.sql.js';
import { buildSchema } from './version-names.js';
import { createSchema, moveTable, pointView, readRelationKinds } from './sql/views.sql.js';

/**
 * Inside a promotion's transaction: the views named after the read-model tables, in the
 * default schema, point at `target`'s tables. A serving build still in the default schema
 * (a first build, whose migrations made its tables there) moves to its own schema first:
 * ALTER TABLE … SET SCHEMA changes the catalog only, no row is copied. Readers hold the old
 * view until the commit and get the new one after it: never an empty or mixed model.
 * Returns the schema the serving build moved to, if it moved.
 */
export async function switchViews(
  manager: EntityManager,
  target: BuildRow,
  serving: BuildRow | null,
): Promise<string | null> {
  const [{ schema: home }] = await manager.query<{ schema: string }[]>(
    'SELECT current_schema() AS schema',
  );
  let moved: string | null = null;
  if (serving && serving.schema_name === home) {
    moved = buildSchema(serving);
    for (const query of createSchema(
      moved,
      `Read model of projection ${serving.projection} v${serving.version} build ${serving.build} (Ordinal, docs/projections.md)`,
    ))
      await execute(manager, query);
    const kinds = await execute<{ name: string; kind: string }>(
      manager,
      readRelationKinds(serving.tables),
    );
    for (const { name, kind } of kinds)
      if (kind === 'r' || kind === 'p') await execute(manager, moveTable(name, moved));
  }
  const tables = new Set(target.tables);
  for (const table of tables)
    for (const query of pointView(
      table,
      target.schema_name,
      `Serving read model of projection ${target.projection}: v${target.version} build ${target.build} (switched on promotion; docs/projections.md)`,
    ))
      await execute(manager, query);
  // A table only the old build has keeps answering from it, so no reader finds it missing.
  if (serving)
    for (const table of serving.tables.filter((t) => !tables.has(t)))
      for (const query of pointView(
        table,
        moved ?? serving.schema_name,
        `Read model of projection ${serving.projection}: a table v${target.version} does not have, from v${serving.version}`,
      ))
        await execute(manager, query);
  return moved;
}
