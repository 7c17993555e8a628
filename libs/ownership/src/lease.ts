import { execute, type SqlRunner } from '@ordinal/pg';
import { OwnershipLostError } from './ownership-lost.error.js';
import { fenceLease } from './sql/index.js';

/**
 * A consumer's claim on one lease, as its owner sees it. `isHeld()` is a local, clock-only
 * check (no I/O, so it can run before every message): the lease counts as held until the
 * monotonic time at which the last successful claim or renewal was *sent* plus the lease's
 * time to live — never later than the database's own expiry. `fence(runner)` is the check
 * that counts: it runs in the batch's transaction and makes it fail unless the row still
 * names this owner and epoch.
 */
export class Lease {
  private validUntil: number;
  private revoked = false;

  constructor(
    readonly name: string,
    readonly owner: string,
    readonly epoch: number,
    sentAt: number,
    private readonly ttlMs: number,
    /** What the previous owner last recorded of the consumer (OwnedConsumer.progress), null if nothing. */
    readonly previous: { progress: unknown; ageMs: number } | null = null,
  ) {
    this.validUntil = sentAt + ttlMs;
  }

  /** Held by the local clock: check before every batch (and message); lost leases stay lost. */
  isHeld(): boolean {
    return !this.revoked && performance.now() < this.validUntil;
  }

  /** Milliseconds of validity left (0 when lost). */
  remainingMs(): number {
    return this.isHeld() ? Math.max(0, this.validUntil - performance.now()) : 0;
  }

  /** A renewal sent at `sentAt` succeeded. */
  renewed(sentAt: number): void {
    if (!this.revoked) this.validUntil = Math.max(this.validUntil, sentAt + this.ttlMs);
  }

  /** The lease is gone (a renewal or a fence found it taken or expired). */
  revoke(): void {
    this.revoked = true;
  }

  /** Throws OwnershipLostError unless held locally. */
  ensureHeld(): void {
    if (!this.isHeld()) throw new OwnershipLostError(this.name);
  }

  /**
   * Inside the batch's transaction, before the checkpoint moves: throws OwnershipLostError
   * (the transaction must roll back) unless the lease row still names this owner and epoch
   * and has not expired; holds the row until commit.
   */
  async fence(runner: SqlRunner): Promise<void> {
    this.ensureHeld();
    const rows = await execute(runner, fenceLease(this.name, this.owner, this.epoch, this.ttlMs));
    if (rows.length === 0) {
      this.revoke();
      throw new OwnershipLostError(this.name);
    }
  }
}
