/** One build of a projection version as reports show it. */
export interface ProjectionVersionStatus {
  version: number;
  build: number;
  /** `candidate` (replaying beside the serving one), `serving`, `previous` (kept for rollback), `retired` (tables dropped). */
  state: 'candidate' | 'serving' | 'previous' | 'retired';
  /** Its consumer (group) name: checkpoints, partitions, leases and parked messages. */
  consumers: string;
  /** The schema of its tables. */
  schema: string;
  tables: string[];
  /** Lowest checkpoint of its partitions. */
  position: number;
  /** Behind its target: the head; a candidate's the serving build's position while that one runs; a previous build's its stop. */
  lag: number;
  /** A live process runs it. */
  running: boolean;
  stopAt: number | null;
  /**
   * A previous build a late row may still reach at or below its stop (concurrent mode): it
   * runs on, past its stop, until no passed position there is watched (ORDINAL_LATE_WATCH_MS).
   */
  awaitingLate: boolean;
  liveFrom: number | null;
  promoteAtLag: number | null;
  promotedAt: string | null;
}
