/**
 * The seed's duplicate window (L7): at start it remembers the resend keys (`resendKey`: message
 * type, user id, content and metadata) of the latest `size` messages; for the next `size`
 * ingested messages one whose key is remembered is skipped; after that the check switches
 * itself off until the next start. `size` 0 turns it off. It targets one accident: a producer
 * resending a batch after a restart. Stream appends and messages with an idempotency key pass
 * it by: producers that need exactly-once writes send a key instead.
 */
export class DuplicateWindow {
  private readonly hashes = new Set<string>();
  private ingested = 0;

  constructor(private readonly size: number) {}

  /** Remembers the hashes of the latest messages (newest first or in any order). */
  load(hashes: Iterable<string>): void {
    this.hashes.clear();
    this.ingested = 0;
    if (this.size <= 0) return;
    for (const hash of hashes) this.hashes.add(hash);
  }

  /** Whether the check still runs for a message `offset` places after those recorded. */
  isOpen(offset = 0): boolean {
    return this.size > 0 && this.ingested + offset < this.size;
  }

  /** Whether a message `offset` places ahead would be skipped as a duplicate. */
  isDuplicate(hash: string, offset = 0): boolean {
    return this.isOpen(offset) && this.hashes.has(hash);
  }

  /** Records committed messages; closes the window once `size` have been ingested. */
  record(hashes: string[]): void {
    if (!this.isOpen()) return;
    for (const hash of hashes) this.hashes.add(hash);
    this.ingested += hashes.length;
    if (!this.isOpen()) this.hashes.clear();
  }
}
