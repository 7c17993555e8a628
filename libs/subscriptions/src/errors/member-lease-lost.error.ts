import { OrdinalError } from '@ordinal/pg';

/**
 * An ack or nack from a member whose lease is over: it was declared dead (silent for longer
 * than the member timeout) and the events it held went to other members, or it sent another
 * epoch than its current one. Nothing changed; the member fetches again to get a new lease.
 */
export class MemberLeaseLostError extends OrdinalError {
  constructor(
    readonly group: string,
    readonly memberId: string,
    readonly epoch: number,
  ) {
    super(
      'member_lease_lost',
      `Member '${memberId}' of consumer group '${group}' no longer holds lease epoch ${epoch} (declared dead, its events handed to other members); nothing was changed: fetch or reconnect to get a new lease, and drop the events of the old one`,
    );
  }
}
