import { errorDecision, type ErrorAction, type ErrorPolicy } from '../error-policy.js';
import type { HandlerFailedError } from '../errors/index.js';

/** A message whose retries are spent, to be passed over (and parked) at the next tick. */
export interface SetAside {
  index: number;
  action: 'skip' | 'park';
  error: string;
  failures: number;
}

/**
 * A subscription's error-policy state, without I/O: which message fails and how often in a
 * row, what the policy says when its retries are spent, what was skipped or parked.
 */
export class PoisonTracker {
  /** Stopped by the `stop` policy: stays stopped until resume, rebuild or restart. */
  halted = false;
  /** The message to pass over at the next tick. */
  setAside: SetAside | null = null;
  skipped = 0;
  parked = 0;
  private failing: { index: number; failures: number } | null = null;

  constructor(private readonly policy: ErrorPolicy | undefined) {}

  /** Counts a failure of the message and returns what to do now (`replaying`: at or below the replay boundary). */
  failed(error: HandlerFailedError, replaying: boolean): ErrorAction | 'retry' {
    const failures = this.failing?.index === error.index ? this.failing.failures + 1 : 1;
    this.failing = { index: error.index, failures };
    const action = errorDecision(this.policy, failures, replaying);
    if (action === 'skip' || action === 'park') {
      const cause = error.cause instanceof Error ? error.cause.message : String(error.cause);
      this.setAside = { index: error.index, action, error: cause, failures };
      this.failing = null;
    }
    if (action === 'stop') this.halted = true;
    return action;
  }

  /** The set-aside message was passed over. */
  passed(aside: SetAside): void {
    if (this.setAside === aside) this.setAside = null;
    if (aside.action === 'park') this.parked += 1;
    else this.skipped += 1;
  }

  /** After a fix: run again, counting failures afresh. */
  resume(): void {
    this.halted = false;
    this.failing = null;
  }

  /** After a rebuild: nothing pending. */
  clear(): void {
    this.resume();
    this.setAside = null;
  }
}
