/** What a process knows of one group when it plans (read in one tick). */
export interface GroupView {
  /** The group's consumers (a projection's partitions, or the one consumer), in order. */
  names: string[];
  /** Live owner of each consumer (expired and free ones are absent). */
  owners: Map<string, string>;
  /** Live processes that run the group (this one included or not). */
  members: string[];
  me: string;
}

/** What this process does with a group this tick. */
export interface GroupPlan {
  /** Consumers to claim, in order of preference (a claim may still lose a race). */
  claim: string[];
  /** Consumers of its own to give up (it holds more than its share). */
  release: string[];
  /** This process's share of the group. */
  quota: number;
}

/**
 * Shares a group's consumers among its live members: each gets ⌊n/m⌋ and the first n mod m
 * get one more, members ordered by how many they hold now (then by id), so a process that
 * already holds a consumer keeps it (a single consumer never moves while its owner lives) and
 * the extras stay where they are. A process over its share releases its last consumers; one
 * under it claims free ones. Every process computes the same shares from the same rows; while
 * views differ (a peer just joined or died) the leases, not the plan, keep ownership single.
 */
export function planGroup(view: GroupView): GroupPlan {
  const members = view.members.includes(view.me) ? [...view.members] : [...view.members, view.me];
  const counts = new Map(
    members.map((member) => [
      member,
      view.names.filter((name) => view.owners.get(name) === member).length,
    ]),
  );
  members.sort((a, b) => counts.get(b)! - counts.get(a)! || (a < b ? -1 : a > b ? 1 : 0));
  const n = view.names.length;
  const m = members.length;
  const rank = members.indexOf(view.me);
  const quota = Math.floor(n / m) + (rank < n % m ? 1 : 0);
  const mine = view.names.filter((name) => view.owners.get(name) === view.me);
  if (mine.length > quota) return { claim: [], release: mine.slice(quota), quota };
  const free = view.names.filter((name) => !view.owners.has(name));
  return { claim: free.slice(0, quota - mine.length), release: [], quota };
}
