export * from './dead-letters.controller.js';
export * from './interface-rewind.controller.js';
