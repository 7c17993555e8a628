import type { InterfaceType } from './interface-config.js';

/** Where an interface stands. */
export type InterfaceState =
  | 'starting'
  | 'catching-up'
  | 'live'
  | 'disconnected'
  | 'retrying'
  | 'stopped'
  | 'standby'
  | 'unowned';

/** The figures of a catch-up (P2's log line). */
export interface CatchUpSummary {
  processed: number;
  skipped: number;
  reachedIndex: number;
}

/** One interface as `GET /api/interfaces` and `/metrics` show it. */
export interface InterfaceStatus {
  name: string;
  type: InterfaceType;
  state: InterfaceState;
  includeTypes: string[];
  sinkQueue: string;
  ackQueue: string | null;
  /** Replayable: the saved bookmark (everything up to it was acknowledged). */
  bookmark: number | null;
  /** Replayable: the contiguous acknowledged run of this run (ahead of the bookmark by less than a batch). */
  acknowledged: number | null;
  /** The highest index this run has passed (published or skipped). */
  position: number;
  /** Publishes confirmed by the broker since the server started. */
  published: number;
  /** Messages outside includeTypes acknowledged on the consumer's behalf since the server started. */
  skipped: number;
  /** Acknowledgements dropped for a stale correlation uuid since the server started. */
  staleAcks: number;
  /** Runs started after a failure (broker outage, channel loss, database failure). */
  restarts: number;
  /** Late arrivals published (rows that committed inside holes already passed), marked `late`. */
  late: number;
  /** Replayable: this run's serverCorrelationUuid. */
  correlationUuid: string | null;
  /** The last completed catch-up of this run, if any. */
  catchUp: CatchUpSummary | null;
  lastError: string | null;
}
