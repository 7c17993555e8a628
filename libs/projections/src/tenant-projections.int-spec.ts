import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { LogWriter, tenantIsolationSql, type NewMessage } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startProjectionsApp } from '@ordinal/test-support/projections-app';
import { waitFor } from '@ordinal/test-support/test-server';
import { NestApplicationContext } from '@nestjs/core';
import pg from 'pg';
import type { EntityManager } from 'typeorm';
import { EventHandler } from './decorators/event-handler.decorator.js';
import { Projection } from './decorators/projection.decorator.js';
import type { ProjectionContext } from './projection-context.js';
import { ProjectionsService } from './projections.service.js';
import { TenantWallUnavailableError } from './errors/index.js';

/** What the per-tenant projection saw, for assertions. */
interface TenantSeen {
  index: number;
  tenant: string | null;
  orderId: string;
  /** The transaction the event was applied in. */
  txid: string;
  /** The tenants of the read model's rows the handler's `SELECT` without a WHERE returned. */
  visible: (string | null)[];
}

@Injectable()
class TenantProbe {
  readonly seen: TenantSeen[] = [];
  /** The handler of this order id writes its row for `crossTo` instead of its own tenant (a bug). */
  crossOrder: string | null = null;
  crossTo = '';
}

/** A per-tenant read model: one row per tenant's order, behind the tenant wall. */
@Projection('tenant-orders', { tenantIsolation: true, onError: { retries: 1, then: 'park' } })
@Injectable()
class TenantOrdersProjection {
  constructor(private readonly probe: TenantProbe) {}

  @EventHandler('OrderPlaced')
  async onPlaced(body: { orderId: string; amount: number }, ctx: ProjectionContext): Promise<void> {
    const [{ txid }] = await ctx.manager.query<{ txid: string }[]>(
      'SELECT txid_current()::text AS txid',
    );
    const rows = await ctx.manager.query<{ tenant: string | null }[]>(
      'SELECT tenant FROM tenant_orders ORDER BY tenant',
    );
    this.probe.seen.push({
      index: ctx.index,
      tenant: ctx.tenant,
      orderId: body.orderId,
      txid,
      visible: [...new Set(rows.map((r) => r.tenant))],
    });
    if (ctx.tenant === null) return;
    const tenant = body.orderId === this.probe.crossOrder ? this.probe.crossTo : ctx.tenant;
    await ctx.manager.query(
      'INSERT INTO tenant_orders (tenant, order_id, amount) VALUES ($1, $2, $3)',
      [tenant, body.orderId, body.amount],
    );
  }

  /** An in-place rebuild empties the read model (as the service's own user: every tenant's rows). */
  async reset(manager: EntityManager): Promise<void> {
    await manager.query('DELETE FROM tenant_orders');
  }
}

const READ_MODEL_DDL = [
  'CREATE TABLE tenant_orders (tenant text NOT NULL, order_id text NOT NULL, amount int NOT NULL, PRIMARY KEY (tenant, order_id))',
  ...tenantIsolationSql('tenant_orders'),
];

const placed = (orderId: string, amount: number): NewMessage => ({
  messageType: 'OrderPlaced',
  body: { orderId, amount },
});

describe('Per-tenant projections: handlers behind the row-level security wall (docs/tenants.md)', () => {
  let db: TestDatabase;
  let app: INestApplicationContext | undefined;

  const start = async (withProjection = true) => {
    app = await startProjectionsApp(db.url, {
      providers: withProjection ? [TenantProbe, TenantOrdersProjection] : [],
    });
    return app;
  };
  const stop = async () => {
    await app?.close();
    app = undefined;
  };
  /** The app again, with the projection. */
  const restart = async () => {
    await stop();
    return start();
  };
  const append = async (tenant: string | undefined, messages: NewMessage[]) => {
    const result = await app!
      .get(LogWriter)
      .append({ tenant, messages, skipDuplicateWindow: true });
    return result.entries.map((e) => (e.status === 'created' ? e.message.id : -1));
  };
  const rows = () =>
    db.query<{ tenant: string; order_id: string }>(
      'SELECT tenant, order_id FROM tenant_orders ORDER BY tenant, order_id',
    );

  beforeEach(async () => {
    db = await createTestDatabase();
    // The log's migrations create the role the read model's grants name (the tests start the projection).
    await start(false);
    for (const statement of READ_MODEL_DDL) await db.query(statement);
  });
  afterEach(async () => {
    await stop();
    await db.drop();
  });

  it('applies two tenants’ events in one batch, each as its tenant: rows carry it, a handler’s read sees only its own', async () => {
    // Given events of tenants a and b, interleaved, and one of no tenant, all written before the projection starts (one batch)
    const [a1] = await append('a', [placed('o1', 10)]);
    const [b1] = await append('b', [placed('o1', 20)]);
    const [a2] = await append('a', [placed('o2', 30)]);
    const [b2] = await append('b', [placed('o2', 40)]);
    const [none] = await append(undefined, [placed('o9', 90)]);
    // When the per-tenant projection starts
    await restart();
    await app!.get(ProjectionsService).waitFor('tenant-orders', none, 10_000);
    const seen = app!.get(TenantProbe).seen;
    // Then each tenant's rows carry their tenant
    expect(await rows()).toEqual([
      { tenant: 'a', order_id: 'o1' },
      { tenant: 'a', order_id: 'o2' },
      { tenant: 'b', order_id: 'o1' },
      { tenant: 'b', order_id: 'o2' },
    ]);
    // And ctx.tenant was the event's tenant, in one transaction, switched per event
    expect(seen.map((s) => [s.index, s.tenant])).toEqual([
      [a1, 'a'],
      [b1, 'b'],
      [a2, 'a'],
      [b2, 'b'],
      [none, null],
    ]);
    expect(new Set(seen.map((s) => s.txid)).size).toBe(1);
    // And a handler's SELECT without a WHERE saw only its tenant's rows (b's first event saw none of a's)
    expect(seen.map((s) => s.visible)).toEqual([[], [], ['a'], ['b'], ['a', 'b']]);
    // (the event of no tenant ran without the wall: it saw every tenant's rows)
  });

  it('refuses a row a handler writes for another tenant: the error policy parks the event, no cross-tenant row is stored', async () => {
    // Given the per-tenant projection, whose handler of order 'bad' writes its row for tenant b (a bug)
    await restart();
    const probe = app!.get(TenantProbe);
    probe.crossOrder = 'bad';
    probe.crossTo = 'b';
    // When tenant a's events arrive, the bad one between two good ones, and then b's own
    const [, bad] = await append('a', [placed('o1', 10), placed('bad', 66), placed('o2', 20)]);
    const [last] = await append('b', [placed('o1', 30)]);
    await app!.get(ProjectionsService).waitFor('tenant-orders', last, 10_000);
    // Then PostgreSQL refused the bad row (the policy's check), the error policy parked that event
    const parked = await app!.get(ProjectionsService).listParked('tenant-orders');
    expect(parked.map((p) => p.position)).toEqual([bad]);
    expect(parked[0].error).toMatch(/row-level security/);
    // And no row crossed: b has only its own order, a's good events were applied
    expect(await rows()).toEqual([
      { tenant: 'a', order_id: 'o1' },
      { tenant: 'a', order_id: 'o2' },
      { tenant: 'b', order_id: 'o1' },
    ]);
  });

  it('a raw SQL session as ordinal_tenant sees only its tenant’s rows of the log and the read model, and none without a tenant', async () => {
    // Given both tenants' events applied, and one of no tenant
    await restart();
    await append('a', [placed('o1', 10)]);
    await append(undefined, [placed('o9', 90)]);
    const [last] = await append('b', [placed('o1', 20), placed('o2', 30)]);
    await app!.get(ProjectionsService).waitFor('tenant-orders', last, 10_000);
    // (ProjectionsService.read as one tenant, as docs/tenants.md shows it: b's rows only)
    const read = await app!.get(ProjectionsService).read('tenant-orders', async (manager) => {
      await manager.query(
        `SELECT set_config('role', 'ordinal_tenant', true), set_config('ordinal.tenant', $1, true)`,
        ['b'],
      );
      return manager.query<{ tenant: string }[]>('SELECT tenant FROM tenant_orders');
    });
    expect(read.data.map((r) => r.tenant)).toEqual(['b', 'b']);
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const tenantsOf = async (table: string) =>
        (await client.query<{ tenant: string | null }>(`SELECT tenant FROM ${table}`)).rows.map(
          (r) => r.tenant,
        );
      // When the session switches to the application role and names tenant a
      await client.query(`SET ROLE ordinal_tenant`);
      await client.query(`SET ordinal.tenant = 'a'`);
      // Then a plain SELECT of either table returns a's rows only
      expect(await tenantsOf('messages')).toEqual(['a']);
      expect(await tenantsOf('tenant_orders')).toEqual(['a']);
      // And naming no tenant returns none
      await client.query(`RESET ordinal.tenant`);
      expect(await tenantsOf('messages')).toEqual([]);
      expect(await tenantsOf('tenant_orders')).toEqual([]);
      // (while the owner sees everything)
      await client.query(`RESET ROLE`);
      expect((await tenantsOf('messages')).sort()).toEqual(['a', 'b', 'b', null]);
      expect((await tenantsOf('tenant_orders')).sort()).toEqual(['a', 'b', 'b']);
    } finally {
      await client.end();
    }
  });

  it('rebuilds in place: every tenant’s rows are cleared and replayed, each as its tenant', async () => {
    // Given two tenants' rows
    await restart();
    await append('a', [placed('o1', 10)]);
    const [last] = await append('b', [placed('o1', 20)]);
    const projections = app!.get(ProjectionsService);
    await projections.waitFor('tenant-orders', last, 10_000);
    const probe = app!.get(TenantProbe);
    probe.seen.length = 0;
    // When the projection is rebuilt (blue/green asked for: the default)
    await projections.rebuild('tenant-orders');
    await waitFor(() => probe.seen.length === 2, 10_000, 'the replay');
    await projections.waitFor('tenant-orders', last, 10_000);
    // Then it was rebuilt in place, in its one build, and replayed each event as its tenant
    expect((await projections.listVersions('tenant-orders')).map((v) => v.build)).toEqual([1]);
    expect(probe.seen.map((s) => [s.tenant, s.visible])).toEqual([
      ['a', []],
      ['b', []],
    ]);
    expect(await rows()).toEqual([
      { tenant: 'a', order_id: 'o1' },
      { tenant: 'b', order_id: 'o1' },
    ]);
  });

  it('ctx.tenant and the wall hold for events arriving live, batch after batch', async () => {
    // Given the running projection
    await restart();
    // When each tenant writes, one after the other
    for (const [n, tenant] of ['a', 'b', 'a', 'b'].entries())
      await append(tenant, [placed(`o${n}`, n)]);
    const [last] = await append('a', [placed('o9', 9)]);
    await app!.get(ProjectionsService).waitFor('tenant-orders', last, 10_000);
    // Then every event was handled as its tenant, seeing only its tenant's rows
    const seen = app!.get(TenantProbe).seen;
    expect(seen.map((s) => s.tenant)).toEqual(['a', 'b', 'a', 'b', 'a']);
    for (const s of seen) expect(s.visible.every((t) => t === s.tenant)).toBe(true);
    expect(seen.at(-1)!.visible).toEqual(['a']);
  });
});

/**
 * What `start` failed with (null if it started: closed again). An application whose bootstrap
 * failed is closed too (Nest does not, a process would exit), so nothing of it outlives the test.
 */
async function startFailing(start: () => Promise<INestApplicationContext>): Promise<unknown> {
  const opened: NestApplicationContext[] = [];
  // eslint-disable-next-line @typescript-eslint/unbound-method -- put back below, called with its own `this`
  const init = NestApplicationContext.prototype.init;
  NestApplicationContext.prototype.init = function (this: NestApplicationContext) {
    opened.push(this);
    return init.call(this);
  };
  try {
    await start();
    return null;
  } catch (error) {
    return error;
  } finally {
    NestApplicationContext.prototype.init = init;
    for (const context of opened) await context.close().catch(() => undefined);
  }
}

describe('Per-tenant projections without the wall', () => {
  it('does not start: a database user that cannot take ordinal_tenant gets TenantWallUnavailableError', async () => {
    // Given a database owned by a user that is not a member of ordinal_tenant (its migrations could not grant it)
    const db = await createTestDatabase(undefined, { blank: true });
    const user = `${db.name}_nowall`;
    await db.query(`CREATE ROLE ${user} LOGIN`);
    let app: INestApplicationContext | undefined;
    try {
      await db.admin(`ALTER DATABASE ${db.name} OWNER TO ${user}`);
      const url = new URL(db.url);
      url.username = user;
      // When the per-tenant projection starts as that user
      const error = await startFailing(() =>
        startProjectionsApp(url.toString(), { providers: [TenantProbe, TenantOrdersProjection] }),
      );
      // Then the start fails with the typed error naming the projection
      expect(error).toBeInstanceOf(TenantWallUnavailableError);
      expect(error).toMatchObject({ code: 'invalid_configuration', projection: 'tenant-orders' });
      // And once the user may take the role, it starts and applies events behind the wall
      await db.query(`GRANT ordinal_tenant TO ${user}`);
      app = await startProjectionsApp(url.toString(), {
        providers: [TenantProbe, TenantOrdersProjection],
      });
      for (const statement of READ_MODEL_DDL) await db.query(statement);
      const { entries } = await app
        .get(LogWriter)
        .append({ tenant: 'a', messages: [placed('o1', 10)] });
      const index = entries[0].status === 'created' ? entries[0].message.id : -1;
      await app.get(ProjectionsService).waitFor('tenant-orders', index, 10_000);
      expect(app.get(TenantProbe).seen.map((s) => [s.tenant, s.orderId])).toEqual([['a', 'o1']]);
    } finally {
      await app?.close();
      await db.drop();
      await db.admin(`DROP ROLE IF EXISTS ${user}`);
    }
  });
});
