export * from './correlation-context.js';
export * from './traceparent.js';
export * from './tracer.js';
export * from './span-names.js';
