/** What a group's counters count. */
export type GroupCounter = 'delivered' | 'redelivered' | 'acked' | 'nacked' | 'parked';

/** Counters per consumer group since this process started (the server exports them as metrics). */
export class GroupCounters {
  private readonly counts = new Map<string, Record<GroupCounter, number>>();

  add(group: string, counter: GroupCounter, by: number): void {
    if (by === 0) return;
    let counts = this.counts.get(group);
    if (!counts) {
      counts = { delivered: 0, redelivered: 0, acked: 0, nacked: 0, parked: 0 };
      this.counts.set(group, counts);
    }
    counts[counter] += by;
  }

  /** Every group's counters. */
  entries(): Array<[string, Readonly<Record<GroupCounter, number>>]> {
    return [...this.counts.entries()];
  }
}
