import { Inject, Injectable, Logger } from '@nestjs/common';
import { EVENT_SOURCING_OPTIONS } from '../event-sourcing.constants.js';
import type { ResolvedEventSourcingOptions } from '../event-sourcing-options.js';
import { InvalidUpcasterError } from '../errors/index.js';
import type { UpcasterDefinition } from './upcaster-definition.js';

/** An event's data after the upcaster chain, with the schema version it reached. */
export interface UpcastResult {
  schemaVersion: number;
  data: unknown;
}

/**
 * Upcasters by (event type, from schema version). `upcast` applies the chain v1 → v2 → v3 …
 * until no upcaster continues it; stored events are never touched.
 */
@Injectable()
export class UpcasterRegistry {
  private readonly logger = new Logger(UpcasterRegistry.name);
  private readonly byKey = new Map<string, UpcasterDefinition>();

  constructor(
    @Inject(EVENT_SOURCING_OPTIONS) options: Pick<ResolvedEventSourcingOptions, 'upcasters'>,
  ) {
    for (const definition of options.upcasters) this.register(definition);
  }

  /** Adds an upcaster; a second one for the same (type, version) is ignored with a warning. */
  register(definition: UpcasterDefinition): void {
    const { eventType, fromVersion } = definition;
    if (!Number.isInteger(fromVersion) || fromVersion < 1) {
      throw new InvalidUpcasterError(
        `Upcaster of '${eventType}' has fromVersion ${fromVersion}; use an integer >= 1`,
      );
    }
    const key = `${eventType}\u0000${fromVersion}`;
    const existing = this.byKey.get(key);
    if (existing && existing !== definition) {
      this.logger.warn(
        `A second upcaster for '${eventType}' from v${fromVersion} is ignored; the first one stays`,
      );
      return;
    }
    this.byKey.set(key, definition);
  }

  /** True when an upcaster of the event type from that version is registered. */
  has(eventType: string, fromVersion: number): boolean {
    return this.byKey.has(`${eventType}\u0000${fromVersion}`);
  }

  /** Applies the chain from `schemaVersion` up to `toVersion` (a no-op without upcasters). */
  upcast(
    eventType: string,
    schemaVersion: number,
    data: unknown,
    metadata: Record<string, unknown> | null,
    toVersion = Number.MAX_SAFE_INTEGER,
  ): UpcastResult {
    let version = schemaVersion;
    let current = data;
    while (version < toVersion) {
      const next = this.byKey.get(`${eventType}\u0000${version}`);
      if (!next) return { schemaVersion: version, data: current };
      current = next.upcast(current, metadata);
      version += 1;
    }
    return { schemaVersion: version, data: current };
  }
}
