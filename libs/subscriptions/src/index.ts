// The public door of @ordinal/subscriptions. What only sibling libraries use is in ./internal.ts.
export * from './errors/index.js';
export type { SubscriptionsModuleOptions } from './subscriptions-options.js';
export * from './subscriptions.module.js';
export * from './subscriptions.service.js';
export * from './subscription-context.js';
export * from './source/subscription-stream.js';
export { Subscription } from './runner/subscription.js';
export type { ErrorAction, ErrorPolicy } from './error-policy.js';
export type { ParkedMessage } from './runner/parked-store.js';
export * from './directory/consumer-report.js';
export * from './directory/consumers-health.indicator.js';
export type { ParkedReplay } from './runner/parked-replay.js';
export * from './groups/index.js';
