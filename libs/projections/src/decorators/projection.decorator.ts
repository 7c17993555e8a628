import 'reflect-metadata';
import { PROJECTION_METADATA } from '../projections.constants.js';
import type { ProjectionMetadata, ProjectionOptions } from '../projection-options.js';

/**
 * Marks a Nest provider as a projection: its `@EventHandler` methods apply events to a
 * read model, in one transaction per batch with its checkpoint named `name`:
 * `@Projection('orders', { readModels })` or `@Projection({ name: 'orders', version: 2 })`.
 * Only records metadata; `ProjectionsModule` discovers it at start.
 */
export function Projection(
  nameOrOptions: string | (ProjectionOptions & { name: string }),
  options: ProjectionOptions = {},
): ClassDecorator {
  const metadata: ProjectionMetadata =
    typeof nameOrOptions === 'string'
      ? { name: nameOrOptions, options }
      : (({ name, ...rest }) => ({ name, options: { ...rest, ...options } }))(nameOrOptions);
  return (target) => Reflect.defineMetadata(PROJECTION_METADATA, metadata, target);
}
