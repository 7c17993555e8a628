import { Inject } from '@nestjs/common';
import type { AggregateClass } from './aggregate-repository.js';

/** The injection token of `AggregateRepository<T>` for one aggregate class. */
export function aggregateRepositoryToken(aggregate: AggregateClass): string {
  return `ordinal:AggregateRepository:${aggregate.name}`;
}

/** Injects the repository `EventSourcingModule.forFeature([Order])` provides: `@InjectAggregateRepository(Order)`. */
export function InjectAggregateRepository(
  aggregate: AggregateClass,
): ParameterDecorator & PropertyDecorator {
  return Inject(aggregateRepositoryToken(aggregate));
}
