export * from './dead-letters.controller.js';
export * from './dead-letters.service.js';
export * from './interface-rewind.controller.js';
