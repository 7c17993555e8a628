import { OrdinalError } from '@ordinal/pg';

/** Two subscriptions (or projections) were given one name: they would share a checkpoint. */
export class DuplicateSubscriptionError extends OrdinalError {
  constructor(readonly subscription: string) {
    super(
      'duplicate_subscription',
      `A subscription named '${subscription}' is already registered; give each subscription and projection its own name`,
    );
  }
}
