/** `@ordinal/projections/internal`: for Ordinal's server and tests only; not a public API. */
export type { ProjectionDefinition, HandlerRoute } from './explorer/projection-definition.js';
export { buildConsumers, buildSchema, schemaSlug } from './versions/version-names.js';
export type { BuildRow } from './versions/sql/builds.sql.js';
