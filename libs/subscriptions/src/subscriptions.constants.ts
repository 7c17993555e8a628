/** Table names of this library live in one place; identifiers never come from input. */
export const SUBSCRIPTION_TABLES = {
  checkpoints: 'checkpoints',
  parked: 'parked_messages',
  requests: 'consumer_requests',
  /** Builds of versioned projections (written by @ordinal/projections). */
  projectionVersions: 'projection_versions',
} as const;

/**
 * Payloads a trigger sends on the log's channel (`ordinal_log`, LOG_CHANNEL) when these tables
 * change, whichever process wrote them: the processes that follow them look at once, instead
 * of polling (migration ConsumerNotices1765200000800).
 */
export const SUBSCRIPTION_NOTICES = {
  /** A consumer request was written (`consumer_requests`): owners look for theirs. */
  consumerRequest: 'consumer-request',
  /** A projection build was added or changed (`projection_versions`): processes follow the builds. */
  projectionBuilds: 'projection-builds',
} as const;
