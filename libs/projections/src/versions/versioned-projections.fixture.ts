import { Injectable } from '@nestjs/common';
import { Column, Entity, PrimaryColumn } from 'typeorm';
import { EventHandler } from '../decorators/event-handler.decorator.js';
import { Projection } from '../decorators/projection.decorator.js';
import type { ProjectionContext } from '../projection-context.js';

/** The read model: a tally per key. */
@Entity('bg_tally')
export class Tally {
  @PrimaryColumn('text') id!: string;
  @Column('int') n!: number;
}

/** The read model's table, as a user's migration makes it for the first version. */
export const TALLY_DDL = 'CREATE TABLE bg_tally (id text PRIMARY KEY, n int NOT NULL)';

/** Every handler call, with the version that made it (side effects are the live ones). */
@Injectable()
export class VersionProbe {
  readonly seen: { version: number; index: number; isReplay: boolean }[] = [];
  /** Indexes that ran a side effect (isReplay false), by version. */
  live(version: number): number[] {
    return this.seen.filter((s) => s.version === version && !s.isReplay).map((s) => s.index);
  }
}

async function bump(ctx: ProjectionContext, id: string, by: number): Promise<void> {
  await ctx.manager.query(
    'INSERT INTO bg_tally (id, n) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET n = bg_tally.n + $2',
    [id, by],
  );
}

/** v1 counts each event once. */
@Projection('bg-tally', { readModels: [Tally] })
@Injectable()
export class TallyV1 {
  constructor(private readonly probe: VersionProbe) {}

  @EventHandler('Counted')
  async on(body: { id: string }, ctx: ProjectionContext): Promise<void> {
    this.probe.seen.push({ version: 1, index: ctx.index, isReplay: ctx.isReplay });
    await bump(ctx, body.id, 1);
  }
}

/** v2 changed the handler: each event counts 10; promoted by hand. */
@Projection({ name: 'bg-tally', version: 2, readModels: [Tally], promoteAtLag: false })
@Injectable()
export class TallyV2 {
  constructor(private readonly probe: VersionProbe) {}

  @EventHandler('Counted')
  async on(body: { id: string }, ctx: ProjectionContext): Promise<void> {
    this.probe.seen.push({ version: 2, index: ctx.index, isReplay: ctx.isReplay });
    await bump(ctx, body.id, 10);
  }
}

/** A second read model, for a deploy that replaces every process at once. */
@Entity('bg_solo')
export class Solo {
  @PrimaryColumn('bigint') index!: string;
  @Column('int') version!: number;
}

export const SOLO_DDL = 'CREATE TABLE bg_solo (index bigint PRIMARY KEY, version int NOT NULL)';

async function record(probe: VersionProbe, version: number, ctx: ProjectionContext) {
  probe.seen.push({ version, index: ctx.index, isReplay: ctx.isReplay });
  await ctx.manager.query('INSERT INTO bg_solo (index, version) VALUES ($1, $2)', [
    ctx.index,
    version,
  ]);
}

@Projection('bg-solo', { readModels: [Solo] })
@Injectable()
export class SoloV1 {
  constructor(private readonly probe: VersionProbe) {}

  @EventHandler('Solo')
  on(_body: unknown, ctx: ProjectionContext): Promise<void> {
    return record(this.probe, 1, ctx);
  }
}

/** Promoted by itself (promoteAtLag 0, the default). */
@Projection({ name: 'bg-solo', version: 2, readModels: [Solo] })
@Injectable()
export class SoloV2 {
  constructor(private readonly probe: VersionProbe) {}

  @EventHandler('Solo')
  on(_body: unknown, ctx: ProjectionContext): Promise<void> {
    return record(this.probe, 2, ctx);
  }
}

/** A read model shared by replicas: a tally per key, in two partitions. */
@Entity('bg_pair')
export class Pair {
  @PrimaryColumn('text') id!: string;
  @Column('int') n!: number;
}

export const PAIR_DDL = 'CREATE TABLE bg_pair (id text PRIMARY KEY, n int NOT NULL)';

/** Run by two replicas; its builds are promoted by hand. */
@Projection({
  name: 'bg-pair',
  readModels: [Pair],
  promoteAtLag: false,
  partitions: 2,
  partitionBy: (message) => (message.body as { id: string }).id,
})
@Injectable()
export class PairV1 {
  @EventHandler('Paired')
  async on(body: { id: string }, ctx: ProjectionContext): Promise<void> {
    await ctx.manager.query(
      'INSERT INTO bg_pair (id, n) VALUES ($1, 1) ON CONFLICT (id) DO UPDATE SET n = bg_pair.n + 1',
      [body.id],
    );
  }
}
