export * from './errors/index.js';
export * from './projection-options.js';
export * from './projection-context.js';
export * from './decorators/projection.decorator.js';
export { EventHandler, type HandledEvent } from './decorators/event-handler.decorator.js';
export * from './projections.module.js';
export * from './projections.service.js';
