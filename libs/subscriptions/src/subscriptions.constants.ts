/** Table names of this library live in one place; identifiers never come from input. */
export const SUBSCRIPTION_TABLES = {
  checkpoints: 'checkpoints',
  parked: 'parked_messages',
  requests: 'consumer_requests',
  /** Builds of versioned projections (written by @ordinal/projections). */
  projectionVersions: 'projection_versions',
} as const;
