import 'reflect-metadata';
import { PROJECTION_METADATA } from '../projections.constants.js';
import type { ProjectionMetadata, ProjectionOptions } from '../projection-options.js';

/**
 * Marks a Nest provider as a projection: its `@EventHandler` methods apply events to a
 * read model, in one transaction per batch with its checkpoint named `name`. Only records
 * metadata; `ProjectionsModule` discovers it at start.
 */
export function Projection(name: string, options: ProjectionOptions = {}): ClassDecorator {
  const metadata: ProjectionMetadata = { name, options };
  return (target) => Reflect.defineMetadata(PROJECTION_METADATA, metadata, target);
}
