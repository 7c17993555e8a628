/** `@ordinal/projections/internal`: for Ordinal's server and tests only; not a public API. */
export type { ProjectionDefinition, HandlerRoute } from './explorer/projection-definition.js';
