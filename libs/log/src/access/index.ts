export * from './access-rule.js';
export * from './access-rules.js';
