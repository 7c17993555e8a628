/** What a tenant's deletion answers (docs/tenants.md#deleting-a-tenant). */
export interface TenantDeletion {
  tenant: string;
  deletedAt: string;
  deletedBy: string;
  reason: string;
  /**
   * The log's head when the deletion committed: every position of the tenant is at or below
   * it, and reads back as a `deleted` tombstone from then on.
   */
  throughIndex: number;
  /** Index of the `$tenant-deleted` marker. */
  markerIndex: number | null;
  /** Keys of the tenant's subjects destroyed by the first deletion (crypto-shredding). */
  keysDestroyed: number;
  /** When a scavenge had erased every row of the tenant (null until one has). */
  scavengedAt: string | null;
  /** True when the tenant had been deleted before (nothing was done again). */
  alreadyDeleted: boolean;
}
