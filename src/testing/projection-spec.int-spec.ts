import { Column, Entity, PrimaryColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import pg from 'pg';
import {
  DomainEvent,
  EventHandler,
  Projection,
  TOMBSTONE_ROUTE,
  type ProjectionContext,
  type TombstoneEvent,
} from '@ordinal/nestjs';
import { ProjectionSpec } from '@ordinal/nestjs/testing';
import { serverUrl } from '@ordinal/test-support/test-database';

@DomainEvent('TicketSold')
class TicketSold {
  constructor(
    readonly show: string,
    readonly seats: number,
  ) {}
}

@Entity('show_sales')
class ShowSales {
  @PrimaryColumn('text') show: string;
  @Column('int') seats: number;
}

class CreateShowSales1767225600000 implements MigrationInterface {
  async up(runner: QueryRunner): Promise<void> {
    await runner.query('CREATE TABLE show_sales (show text PRIMARY KEY, seats int NOT NULL)');
  }
  async down(runner: QueryRunner): Promise<void> {
    await runner.query('DROP TABLE show_sales');
  }
}

@Projection('show-sales', { readModels: [ShowSales] })
class ShowSalesProjection {
  @EventHandler(TicketSold)
  async onTicketSold(event: TicketSold, ctx: ProjectionContext): Promise<void> {
    await ctx.manager.query(
      'INSERT INTO show_sales (show, seats) VALUES ($1, $2) ON CONFLICT (show) DO UPDATE SET seats = show_sales.seats + $2',
      [event.show, event.seats],
    );
  }
}

/** Keyed by stream: a `$stream-deleted` removes the row; tombstones are counted. */
@Projection('show-totals', { readModels: [ShowSales] })
class ShowTotalsProjection {
  tombstones: TombstoneEvent[] = [];

  @EventHandler(TicketSold)
  async onTicketSold(event: TicketSold, ctx: ProjectionContext): Promise<void> {
    await ctx.manager.query(
      'INSERT INTO show_sales (show, seats) VALUES ($1, $2) ON CONFLICT (show) DO UPDATE SET seats = show_sales.seats + $2',
      [event.show, event.seats],
    );
  }

  @EventHandler('$stream-deleted')
  async onDeleted(event: { streamId: string }, ctx: ProjectionContext): Promise<void> {
    await ctx.manager.query('DELETE FROM show_sales WHERE show = $1', [event.streamId]);
  }

  @EventHandler(TOMBSTONE_ROUTE)
  onTombstone(event: TombstoneEvent): void {
    this.tombstones.push(event);
  }
}

async function databaseExists(name: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: serverUrl() });
  await client.connect();
  try {
    return (
      (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1
    );
  } finally {
    await client.end();
  }
}

describe('ProjectionSpec', () => {
  it('runs a projection on a fresh database to the head, hands over the read model, and drops the database', async () => {
    // Given a projection spec with the read model's entity and migration
    const spec = await ProjectionSpec.start(ShowSalesProjection, {
      url: serverUrl(),
      entities: [ShowSales],
      migrations: [CreateShowSales1767225600000],
    });
    const name = spec.dataSource.driver.database as string;
    try {
      expect(name).toMatch(/^ordinal_spec_/);
      expect(await databaseExists(name)).toBe(true);
      // When events are appended to two streams and the projection runs to the head
      await spec.given('show-1', new TicketSold('show-1', 2), new TicketSold('show-1', 3));
      await spec.given('show-2', new TicketSold('show-2', 1));
      await spec.givenMessages({ messageType: 'Unrelated', body: { a: 1 } });
      await spec.run();
      // Then the read model holds every event's effect
      const rows = await spec.repository(ShowSales).find({ order: { show: 'ASC' } });
      expect(rows).toEqual([
        { show: 'show-1', seats: 5 },
        { show: 'show-2', seats: 1 },
      ]);
      expect(spec.projection).toBeInstanceOf(ShowSalesProjection);
    } finally {
      await spec.stop();
    }
    // And the database is gone afterwards
    expect(await databaseExists(name)).toBe(false);
  });

  it('runs on the embedded database (PGlite) with no PostgreSQL server, and refuses concurrent ordering there', async () => {
    // Given a spec on the embedded database
    const spec = await ProjectionSpec.start(ShowSalesProjection, {
      embedded: true,
      entities: [ShowSales],
      migrations: [CreateShowSales1767225600000],
    });
    try {
      expect(spec.dataSource.driver.database).toBe('postgres');
      // When events are appended and the projection runs to the head
      await spec.given('show-1', new TicketSold('show-1', 2), new TicketSold('show-1', 4));
      await spec.run();
      // Then the read model holds them
      expect(await spec.repository(ShowSales).find()).toEqual([{ show: 'show-1', seats: 6 }]);
    } finally {
      await spec.stop();
    }
    await expect(
      ProjectionSpec.start(ShowSalesProjection, {
        embedded: true,
        ordinal: { log: { ordering: 'concurrent' } },
      }),
    ).rejects.toThrow(/Concurrent ordering needs a PostgreSQL server/);
  });

  it('drops its database when the application cannot start', async () => {
    class BrokenMigration1767225600001 implements MigrationInterface {
      async up(runner: QueryRunner): Promise<void> {
        await runner.query('SELECT no_such_function()');
      }
      async down(): Promise<void> {}
    }
    await expect(
      ProjectionSpec.start(ShowSalesProjection, {
        url: serverUrl(),
        databasePrefix: 'ordinal_spec_broken',
        entities: [ShowSales],
        migrations: [BrokenMigration1767225600001],
      }),
    ).rejects.toThrow(/Migrations failed/);
    expect(await specDatabases('ordinal_spec_broken_%')).toEqual([]);
  });
  it('hands a projection $stream-deleted and the tombstones of the deleted stream, never their bodies', async () => {
    // Given a projection keyed by stream, with a $stream-deleted and a $tombstone handler,
    // deployed after the history below (so it cannot have read show-1's bodies before the delete)
    const spec = await ProjectionSpec.start(ShowTotalsProjection, {
      url: serverUrl(),
      entities: [ShowSales],
      migrations: [CreateShowSales1767225600000],
      startAtRun: true,
    });
    try {
      // When a stream is deleted before the projection reads it, and another stays
      await spec.given('show-1', new TicketSold('show-1', 2), new TicketSold('show-1', 3));
      await spec.givenExpecting('show-2', 'no_stream', new TicketSold('show-2', 1));
      await spec.givenDeleted('show-1');
      await spec.givenExpecting('show-2', 'stream_exists', new TicketSold('show-2', 4));
      await spec.run();
      // Then the deleted stream's events came as tombstones, its row is gone, the other stays
      expect(spec.projection.tombstones).toEqual([
        expect.objectContaining({ streamId: 'show-1', streamVersion: 1, reason: 'deleted' }),
        expect.objectContaining({ streamId: 'show-1', streamVersion: 2, reason: 'deleted' }),
      ]);
      expect(await spec.repository(ShowSales).find()).toEqual([{ show: 'show-2', seats: 5 }]);
    } finally {
      await spec.stop();
    }
  });
});

async function specDatabases(pattern: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: serverUrl() });
  await client.connect();
  try {
    return (
      await client.query<{ datname: string }>(
        'SELECT datname FROM pg_database WHERE datname LIKE $1 ORDER BY 1',
        [pattern],
      )
    ).rows.map((r) => r.datname);
  } finally {
    await client.end();
  }
}
