import { OrdinalError } from '@ordinal/pg';

/** No subscription or projection of that name runs in this application. */
export class SubscriptionNotFoundError extends OrdinalError {
  constructor(readonly subscription: string) {
    super(
      'subscription_not_found',
      `No subscription or projection named '${subscription}' runs here; GET /api/projections lists them`,
    );
  }
}
