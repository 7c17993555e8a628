/** @ordinal/nestjs/testing: the testing kit. `AggregateSpec` in memory, `ProjectionSpec` on a fresh database. */
export { AggregateSpec, Then, type SpecResult, type ErrorClass } from './aggregate-spec.js';
export { AggregateSpecFailure } from './aggregate-spec-failure.error.js';
export { ProjectionSpec, type ProjectionSpecOptions } from './projection-spec.js';
