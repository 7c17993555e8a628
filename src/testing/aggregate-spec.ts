import { isDeepStrictEqual } from 'node:util';
import type {
  AggregateClass,
  AggregateOptions,
  AggregateRoot,
  EventClass,
} from '@ordinal/event-sourcing';
import {
  AGGREGATE_METADATA,
  eventClassOf,
  markPersisted,
  requireEventMetadata,
  toEventData,
} from '@ordinal/event-sourcing/internal';
import 'reflect-metadata';
import { AggregateSpecFailure } from './aggregate-spec-failure.error.js';

/** What `when` ran into: the events it applied, or the error it threw. */
type Outcome<T> =
  | { aggregate: T; events: object[]; error: null }
  | { aggregate: T; events: object[]; error: unknown };

/** `void` after a synchronous `when`, a `Promise<void>` to await after an asynchronous one. */
export type SpecResult<R> = R extends PromiseLike<unknown> ? Promise<void> : void;

/** An error class, as `expectError` takes it. */
export type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * Given / when / then for an aggregate, in memory (no database, no Nest): milliseconds a case,
 * in Jest, `node:test` or any runner.
 *
 * ```ts
 * AggregateSpec.for(Order)
 *   .given(new OrderPlaced('order-1', 'alice'))
 *   .when((order) => order.ship())
 *   .expectEvents(new OrderShipped('order-1'));
 * ```
 * The given events are replayed as a load replays them (handlers `onX`, version = their
 * count); `when` runs the command; the expectations compare the events the command applied
 * by type (`@DomainEvent` name) and data, or the error it threw, or the state it left.
 * An expectation that fails throws `AggregateSpecFailure`.
 */
export class AggregateSpec<T extends AggregateRoot> {
  private constructor(
    private readonly aggregate: AggregateClass<T>,
    private readonly streamId: string,
    private readonly history: object[],
  ) {}

  /** A spec of `aggregate`, on the stream `streamId` (default `<class name in lower case>-1`). */
  static for<T extends AggregateRoot>(
    aggregate: AggregateClass<T>,
    streamId = `${aggregate.name.toLowerCase()}-1`,
  ): AggregateSpec<T> {
    const options = Reflect.getMetadata(AGGREGATE_METADATA, aggregate) as
      AggregateOptions | undefined;
    if (!options)
      throw new AggregateSpecFailure(
        `${aggregate.name} is not an aggregate: decorate it with @Aggregate({ events: [...] })`,
      );
    return new AggregateSpec(aggregate, streamId, []);
  }

  /** Events already in the stream, oldest first (instances of the aggregate's `@DomainEvent` classes). */
  given(...events: object[]): AggregateSpec<T> {
    return new AggregateSpec(this.aggregate, this.streamId, [...this.history, ...events]);
  }

  /** The command under test. Returns the expectations; they are async only when `command` is. */
  when<R>(command: (aggregate: T) => R): Then<T, R> {
    const aggregate = this.replay();
    let result: R;
    try {
      result = command(aggregate);
    } catch (error) {
      return new Then<T, R>({ aggregate, events: pending(aggregate), error }, null);
    }
    if (isPromiseLike(result)) {
      const settled = Promise.resolve(result).then(
        (): Outcome<T> => ({ aggregate, events: pending(aggregate), error: null }),
        (error: unknown): Outcome<T> => ({ aggregate, events: pending(aggregate), error }),
      );
      return new Then<T, R>(null, settled);
    }
    return new Then<T, R>({ aggregate, events: pending(aggregate), error: null }, null);
  }

  private replay(): T {
    const options = Reflect.getMetadata(AGGREGATE_METADATA, this.aggregate) as AggregateOptions;
    const aggregate = new this.aggregate(this.streamId);
    for (const event of this.history) {
      const type = eventClassOf(event) as EventClass;
      const { eventType } = requireEventMetadata(type);
      if (!options.events.includes(type)) {
        throw new AggregateSpecFailure(
          `given: ${this.aggregate.name}'s @Aggregate({ events }) does not list ${type.name} ('${eventType}')`,
        );
      }
      aggregate.apply(event, true);
    }
    markPersisted(aggregate, this.history.length);
    return aggregate;
  }
}

/** The expectations after `when`. */
export class Then<T extends AggregateRoot, R> {
  constructor(
    private readonly outcome: Outcome<T> | null,
    private readonly settled: Promise<Outcome<T>> | null,
  ) {}

  /** The command applied exactly these events, in this order (compared by `@DomainEvent` type and data). */
  expectEvents(...expected: object[]): SpecResult<R> {
    return this.check((outcome) => {
      failOnError(outcome, 'events');
      const want = expected.map(describeEvent);
      const got = outcome.events.map(describeEvent);
      const same =
        want.length === got.length &&
        want.every((w, i) => w.type === got[i].type && isDeepStrictEqual(w.data, got[i].data));
      if (!same) {
        throw new AggregateSpecFailure(
          `expected events:\n${listEvents(want)}\nbut the command applied:\n${listEvents(got)}`,
        );
      }
    });
  }

  /** The command applied no event. */
  expectNoEvents(): SpecResult<R> {
    return this.expectEvents();
  }

  /** The command threw an instance of `type` (whose message matches `message`, when given), and applied nothing before. */
  expectError(type: ErrorClass, message?: string | RegExp): SpecResult<R> {
    return this.check((outcome) => {
      if (outcome.error === null) {
        throw new AggregateSpecFailure(
          `expected ${type.name} but the command succeeded, applying:\n${listEvents(outcome.events.map(describeEvent))}`,
        );
      }
      const error = outcome.error;
      if (!(error instanceof type)) {
        throw new AggregateSpecFailure(
          `expected ${type.name} but the command threw ${nameOf(error)}: ${messageOf(error)}`,
          { cause: error },
        );
      }
      const text = messageOf(error);
      if (
        message !== undefined &&
        (typeof message === 'string' ? !text.includes(message) : !message.test(text))
      ) {
        throw new AggregateSpecFailure(
          `expected ${type.name} with a message matching ${String(message)}, got: ${text}`,
          { cause: error },
        );
      }
    });
  }

  /**
   * The state the command left: `check` asserts with your runner's `expect` or `node:assert`
   * (its error fails the spec), or returns false to fail it.
   */
  expectState(check: (aggregate: T) => boolean | void): SpecResult<R> {
    return this.check((outcome) => {
      failOnError(outcome, 'a state');
      let verdict: boolean | void;
      try {
        verdict = check(outcome.aggregate);
      } catch (error) {
        throw error instanceof Error
          ? error
          : new AggregateSpecFailure(`expectState failed: ${String(error)}`);
      }
      if (verdict === false)
        throw new AggregateSpecFailure(
          `expectState returned false for ${outcome.aggregate.id} at version ${outcome.aggregate.version}`,
        );
    });
  }

  private check(assert: (outcome: Outcome<T>) => void): SpecResult<R> {
    if (this.outcome) {
      assert(this.outcome);
      return undefined as SpecResult<R>;
    }
    return this.settled!.then(assert) as SpecResult<R>;
  }
}

function pending(aggregate: AggregateRoot): object[] {
  return [...aggregate.getUncommittedEvents()];
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null)?.then === 'function';
}

function failOnError(outcome: Outcome<AggregateRoot>, what: string): void {
  if (outcome.error !== null) {
    throw new AggregateSpecFailure(
      `expected ${what} but the command threw ${nameOf(outcome.error)}: ${messageOf(outcome.error)}`,
      { cause: outcome.error },
    );
  }
}

function describeEvent(event: object): { type: string; data: unknown } {
  const type = eventClassOf(event) as EventClass;
  // Stored data is JSON: compare what would be stored (Dates as strings, undefined fields dropped).
  return {
    type: requireEventMetadata(type).eventType,
    data: JSON.parse(JSON.stringify(toEventData(event))) as unknown,
  };
}

function listEvents(events: { type: string; data: unknown }[]): string {
  return events.length === 0
    ? '  (none)'
    : events.map((e) => `  ${e.type} ${JSON.stringify(e.data)}`).join('\n');
}

function nameOf(error: unknown): string {
  return (error as { constructor?: { name?: string } } | null)?.constructor?.name ?? typeof error;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
