export * from './consumer-groups.service.js';
export * from './group-status.js';
export type { GroupCounter } from './group-counters.js';
export {
  GROUP_SETTING_LIMITS,
  GROUP_STRATEGIES,
  MAX_KEY_PATH,
  resolveGroupDefinition,
  type ConsumerGroupDeclaration,
  type ConsumerGroupDefinition,
  type ConsumerGroupInput,
  type GroupSource,
  type GroupStrategy,
} from './group-definition.js';
