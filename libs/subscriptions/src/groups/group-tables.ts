/** Table names of consumer groups, in one place; identifiers never come from input. */
export const GROUP_TABLES = {
  groups: 'consumer_groups',
  members: 'consumer_group_members',
  deliveries: 'consumer_group_deliveries',
  batches: 'consumer_group_batches',
  parked: 'consumer_group_parked',
  watch: 'consumer_group_watch',
} as const;
