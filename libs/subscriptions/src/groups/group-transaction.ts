import { LateTracker } from '@ordinal/log/internal';
import { execute, toPosition, type SqlRunner } from '@ordinal/pg';
import { ConsumerGroupNotFoundError } from '../errors/index.js';
import { streamAccepts } from '../source/subscription-stream.js';
import { orderingKey, sourceStream, type ConsumerGroupDefinition } from './group-definition.js';
import { advanceCheckpoint, lockGroup, type GroupRow } from './sql/group-rows.sql.js';
import { insertDeliveries } from './sql/group-deliveries.sql.js';
import { deleteWatch, readWatch } from './sql/group-watch.sql.js';
import type { StoredMessage } from '@ordinal/log';

/**
 * One transaction on one group, holding the group's row lock: the definition and positions as
 * locked, and the steps the operations of several round trips share (check late arrivals, move
 * the checkpoint). A fetch is one call of `ordinal_group_claim` instead (group-claim.sql.ts).
 */
export class GroupTransaction {
  readonly definition: ConsumerGroupDefinition;
  checkpoint: number;
  readTo: number;

  private constructor(
    readonly runner: SqlRunner,
    readonly group: string,
    row: GroupRow,
  ) {
    this.definition = row.definition as ConsumerGroupDefinition;
    this.checkpoint = toPosition(row.checkpoint);
    this.readTo = toPosition(row.read_to);
  }

  /** Locks the group's row (ConsumerGroupNotFoundError when there is none). */
  static async lock(runner: SqlRunner, group: string): Promise<GroupTransaction> {
    const [row] = await execute<GroupRow>(runner, lockGroup(group));
    if (!row) throw new ConsumerGroupNotFoundError(group);
    return new GroupTransaction(runner, group, row);
  }

  /**
   * Looks at the positions the group passed without a row: one that has a row now is a late
   * arrival, added as a delivery marked late (when the source matches it); one that can no longer
   * be filled is forgotten. Returns how many arrived.
   */
  async checkLate(): Promise<number> {
    const watched = await execute<{ position: string; xmax: string }>(
      this.runner,
      readWatch(this.group),
    );
    if (watched.length === 0) return 0;
    const tracker = new LateTracker();
    for (const row of watched) tracker.add([toPosition(row.position)], row.xmax);
    const arrived = await tracker.check(this.runner);
    const stream = sourceStream(this.definition.source);
    await this.add(
      arrived.filter((m) => streamAccepts(stream, m)),
      true,
    );
    const still = new Set(tracker.positions());
    for (const m of arrived) still.delete(m.id);
    const done = watched.map((r) => toPosition(r.position)).filter((p) => !still.has(p));
    if (done.length > 0) await execute(this.runner, deleteWatch(this.group, done));
    return arrived.length;
  }

  /** Moves the checkpoint as far as every event below it is done; returns it. */
  async advance(): Promise<number> {
    const [row] = await execute<{ checkpoint: string }>(this.runner, advanceCheckpoint(this.group));
    this.checkpoint = toPosition(row.checkpoint);
    return this.checkpoint;
  }

  private async add(messages: StoredMessage[], late: boolean): Promise<void> {
    if (messages.length === 0) return;
    await execute(
      this.runner,
      insertDeliveries(
        this.group,
        messages.map((m) => m.id),
        messages.map((m) => orderingKey(this.definition, m)),
        late,
      ),
    );
  }
}
