/** A transaction that held the log table when a hole was first seen. */
export interface HoleWriter {
  pid: number;
  xactStart: string;
  applicationName: string;
}

/** Missing positions [from, to] the watermark is holding at. */
export interface Hole {
  from: number;
  to: number;
  /** When `from` was first seen missing; never reset by later ticks. */
  firstSeenAt: number;
  writers: HoleWriter[];
  /** Fallback: the snapshot xmax when first seen (all transactions below it must end). */
  xmax: string;
  /** Whether the writers could be listed (else the xmax fallback decides). */
  exact: boolean;
}

/** Counters of the watermark, for metrics and status. */
export interface WatermarkCounters {
  holesHeld: number;
  holesReleasedExactly: number;
  holesAbandoned: number;
  lateArrivals: number;
}
