import { Inject } from '@nestjs/common';

/** The injection token of `AggregateRepository<T>` for one aggregate class. */
export function aggregateRepositoryToken(aggregate: Function): string {
  return `ordinal:AggregateRepository:${aggregate.name}`;
}

/** Injects the repository `EventSourcingModule.forFeature([Order])` provides: `@InjectAggregateRepository(Order)`. */
export function InjectAggregateRepository(
  aggregate: Function,
): ParameterDecorator & PropertyDecorator {
  return Inject(aggregateRepositoryToken(aggregate));
}
