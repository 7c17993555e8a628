/** What a subscription does with a message whose handler keeps failing. */
export type ErrorAction = 'stop' | 'skip' | 'park';

/**
 * `onError` of a subscription or projection. A failing batch rolls back and is retried with
 * back-off (`retryInitialMs` doubling to `retryMaxMs`); once the same message has failed
 * `retries` more times, `then` decides:
 *
 * - `stop`: the subscription stops (state `stopped`, its error shown) until `resume`, a
 *   rebuild or a restart;
 * - `skip`: the events before it in the batch commit, then the checkpoint moves over it
 *   without applying it (a warning names the index);
 * - `park`: as skip, and the message is kept in `parked_messages` with its error and
 *   position, shown in the status (`parked`), to replay after a fix (`replayParked`).
 *
 * While replaying history (a message at or below the replay boundary: after a rebuild, or
 * the first start on an existing log) `rebuild` applies instead of `then`.
 */
export interface ErrorPolicy {
  /** Retries of one failing message before `then`. @default Infinity (retry until fixed) */
  retries?: number;
  /** @default 'stop' */
  then?: ErrorAction;
  /** The action while replaying history (rebuild). @default 'stop' */
  rebuild?: ErrorAction;
}

/** The action for a message that failed `failures` times; `retry` while retries remain. */
export function errorDecision(
  policy: ErrorPolicy | undefined,
  failures: number,
  replaying: boolean,
): ErrorAction | 'retry' {
  const retries = policy?.retries ?? Number.POSITIVE_INFINITY;
  if (failures <= retries) return 'retry';
  return (replaying ? policy?.rebuild : policy?.then) ?? 'stop';
}
