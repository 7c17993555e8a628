import type { UpcasterDefinition } from './upcasting/upcaster-definition.js';

/** Options of `EventSourcingModule.forRoot`. Every default lives in `resolveEventSourcingOptions`. */
export interface EventSourcingOptions {
  /** Events read per query when an aggregate loads (one query per page). @default 1000 */
  readPageSize?: number;
  /** Run the snapshots migration at start. @default true */
  migrate?: boolean;
  /** Upcasters given as plain objects (classes with `@Upcaster` are discovered as providers). */
  upcasters?: UpcasterDefinition[];
  /** Publish saved events on the @nestjs/cqrs EventBus after commit. @default true */
  publishEvents?: boolean;
}

export type ResolvedEventSourcingOptions = Required<EventSourcingOptions>;

/** Applies the defaults, in this one place. */
export function resolveEventSourcingOptions(
  options: EventSourcingOptions = {},
): ResolvedEventSourcingOptions {
  return {
    readPageSize: options.readPageSize ?? 1000,
    migrate: options.migrate ?? true,
    upcasters: options.upcasters ?? [],
    publishEvents: options.publishEvents ?? true,
  };
}
