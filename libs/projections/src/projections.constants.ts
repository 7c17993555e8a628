/** Reflect-metadata keys of the decorators (only they write them). */
export const PROJECTION_METADATA = 'ordinal:projection';
export const EVENT_HANDLER_METADATA = 'ordinal:projection:event-handler';
