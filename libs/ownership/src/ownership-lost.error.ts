import { OrdinalError } from '@ordinal/pg';

/**
 * This process no longer owns a consumer (its lease expired or a peer claimed it): the batch
 * in flight rolls back and the consumer stands by; the new owner continues from the checkpoint.
 */
export class OwnershipLostError extends OrdinalError {
  constructor(readonly consumer: string) {
    super(
      'ownership_lost',
      `This process no longer owns '${consumer}' (its lease expired or another process took it over); the batch was rolled back and the new owner continues from the checkpoint`,
    );
  }
}
