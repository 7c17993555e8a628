import { LateTracker, readSkippedBetween } from '@ordinal/log/internal';
import { execute, toPosition, type SqlRunner } from '@ordinal/pg';
import { ConsumerGroupNotFoundError } from '../errors/index.js';
import { streamAccepts } from '../source/subscription-stream.js';
import { orderingKey, sourceStream, type ConsumerGroupDefinition } from './group-definition.js';
import { advanceCheckpoint, lockGroup, setReadTo, type GroupRow } from './sql/group-rows.sql.js';
import { insertDeliveries } from './sql/group-deliveries.sql.js';
import { fillDeliveries } from './sql/group-fill.sql.js';
import { deleteWatch, insertWatch, readWatch } from './sql/group-watch.sql.js';
import type { LogReader, StoredMessage } from '@ordinal/log';

/** Deliveries one group keeps read ahead of its members at most (ready and in flight together). */
export const READ_AHEAD = 10_000;

/**
 * One transaction on one group, holding the group's row lock: the definition and positions as
 * locked, and the steps every operation shares (read the log on, check late arrivals, move the
 * checkpoint).
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
   * Reads the log on from `read_to` (through the low watermark, as every reader does) and adds
   * the matching events as ready deliveries; positions passed without a row are watched for late
   * arrivals. Returns whether it read anything.
   */
  async readOn(reader: LogReader, concurrent: boolean, limit: number): Promise<boolean> {
    // The safe head first: everything at or below it was final before the log was read. One
    // category skips the watermark (its positions commit in order) and reads without a bound.
    const head = await reader.safeHead();
    const category = 'category' in this.definition.source;
    const upTo = category ? Number.MAX_SAFE_INTEGER : head;
    if (upTo <= this.readTo) return false;
    const read = (
      await execute<{ index: string }>(
        this.runner,
        fillDeliveries(this.group, this.definition, this.readTo, upTo, limit),
      )
    ).map((r) => toPosition(r.index));
    const last = read.at(-1) ?? this.readTo;
    const to = read.length === limit ? last : category ? Math.max(last, head) : upTo;
    if (to <= this.readTo) return false;
    if (concurrent && !category) {
      const passed = await execute<{ position: string; xmax: string }>(
        this.runner,
        readSkippedBetween(this.readTo, to),
      );
      const seen = new Set(read);
      const skipped = passed.map((r) => toPosition(r.position)).filter((p) => !seen.has(p));
      if (skipped.length > 0)
        await execute(this.runner, insertWatch(this.group, skipped, passed[0].xmax));
    }
    await execute(this.runner, setReadTo(this.group, to));
    this.readTo = to;
    return true;
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
