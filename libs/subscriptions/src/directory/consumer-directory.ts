import { execute, toPosition } from '@ordinal/pg';
import type { DataSource } from 'typeorm';
import { readDirectory, readPositions, type DirectoryRow } from '../sql/index.js';

/** Reads what every process registered on the database (SQL in sql/directory.sql.ts). */
export class ConsumerDirectory {
  constructor(private readonly dataSource: DataSource) {}

  rows(): Promise<DirectoryRow[]> {
    return execute<DirectoryRow>(this.dataSource.manager, readDirectory());
  }

  async positions(names: string[]): Promise<Map<string, number>> {
    const rows = await execute<{ name: string; position: string }>(
      this.dataSource.manager,
      readPositions(names),
    );
    return new Map(rows.map((r) => [r.name, toPosition(r.position)]));
  }
}
