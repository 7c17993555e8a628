/**
 * Turns the data of one event type from schema version `fromVersion` into `fromVersion + 1`.
 * Must be pure: it runs on every read and the stored event never changes.
 */
export interface UpcasterDefinition {
  eventType: string;
  fromVersion: number;
  upcast(data: unknown, metadata: Record<string, unknown> | null): unknown;
}

/** What a class decorated with `@Upcaster` implements. */
export interface EventUpcaster {
  upcast(data: unknown, metadata: Record<string, unknown> | null): unknown;
}
