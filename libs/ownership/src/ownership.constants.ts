/** Tables of consumer ownership (identifiers never come from input). */
export const OWNERSHIP_TABLES = {
  leases: 'consumer_leases',
  processes: 'consumer_processes',
} as const;
