import type { MigrationInterface, QueryRunner } from 'typeorm';
import { describeSchema, forgetSchemaDescriptions, type TableDescription } from '@ordinal/pg';

const TABLES: Record<string, TableDescription> = {
  projection_versions: {
    comment:
      'Every build of every projection version (docs/projections.md, "Versions"): where its read model lives, its consumers and its state. A new table: no existing row is copied.',
    columns: {
      projection: 'The projection’s name (@Projection name).',
      version: 'The version declared in @Projection({ version }) (1 by default).',
      build: 'The build of that version: 1, then one more for each blue/green rebuild.',
      schema_name:
        'The schema holding this build’s read-model tables (`<projection>_v<version>[_b<build>]`; `public` for a first v1 build until a successor is promoted).',
      consumers:
        'The consumer (group) name of its checkpoints, partitions, leases and parked messages: `<projection>` for v1 build 1, else `<projection>@v<version>[.<build>]`.',
      tables: 'The read-model tables of the build (the views in the default schema point at them).',
      state: 'candidate, serving, previous or retired.',
      stop_at:
        'Its runners apply nothing above this index (set when a successor took over its side effects); null: no limit.',
      live_from:
        'Above this index its handlers run live (isReplay false): the predecessor’s stop_at at its promotion; null: the checkpoint’s own boundary.',
      promote_at_lag:
        'A candidate is promoted by itself once this close to its target; null: only by hand.',
      created_at: 'When the build was created.',
      promoted_at: 'When it last became serving.',
      retired_at: 'When its tables were dropped.',
    },
  },
};

/**
 * Versioned, blue/green projections: one row per build of a projection version. Checkpoints,
 * partitions, leases and parked messages of a build are keyed by its consumer name, so the
 * existing tables gain no column and nothing is copied.
 */
export class ProjectionVersions1765200000200 implements MigrationInterface {
  name = 'ProjectionVersions1765200000200';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE projection_versions (
      projection text NOT NULL,
      version integer NOT NULL,
      build integer NOT NULL DEFAULT 1,
      schema_name text NOT NULL,
      consumers text NOT NULL UNIQUE,
      tables text[] NOT NULL DEFAULT '{}',
      state text NOT NULL,
      stop_at bigint,
      live_from bigint,
      promote_at_lag integer,
      created_at timestamptz NOT NULL DEFAULT now(),
      promoted_at timestamptz,
      retired_at timestamptz,
      PRIMARY KEY (projection, version, build),
      CONSTRAINT projection_versions_state CHECK (state IN ('candidate', 'serving', 'previous', 'retired'))
    )`);
    // At most one serving build per projection: two racing promotions cannot both commit.
    await queryRunner.query(
      `CREATE UNIQUE INDEX projection_versions_one_serving ON projection_versions (projection) WHERE state = 'serving'`,
    );
    await describeSchema(queryRunner, TABLES);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await forgetSchemaDescriptions(queryRunner, TABLES);
    await queryRunner.query('DROP TABLE projection_versions');
  }
}
