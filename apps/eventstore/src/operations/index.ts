export * from './dead-letters.controller.js';
export * from './interface-rewind.controller.js';
export * from './scavenge.controller.js';
export * from './scavenge-schedule.service.js';
export * from './segments.controller.js';
export * from './tenants.controller.js';
