import { validateSync } from 'class-validator';
import {
  GROUP_SETTING_LIMITS,
  GROUP_STRATEGIES,
  resolveGroupDefinition,
  type ConsumerGroupInput,
} from '@ordinal/subscriptions';
import { DefineGroupDto } from './define-group.dto.js';

/** Whether PUT's DTO takes the definition. */
const dtoTakes = (input: Record<string, unknown>): boolean =>
  validateSync(Object.assign(Object.create(DefineGroupDto.prototype) as object, input)).length ===
  0;

/** Whether the shared resolver (the groups file, the module options) takes it. */
const resolverTakes = (input: Record<string, unknown>): boolean => {
  try {
    resolveGroupDefinition(input as unknown as ConsumerGroupInput);
    return true;
  } catch {
    return false;
  }
};

describe('DefineGroupDto and resolveGroupDefinition refuse the same definitions', () => {
  const source = { all: true };

  it.each(Object.entries(GROUP_SETTING_LIMITS))(
    '%s: the same bounds, whole numbers only',
    (field, { min, max }) => {
      for (const value of [min - 1, min, max, max + 1, min + 0.5, String(min)]) {
        const input = { source, [field]: value };
        expect([field, value, dtoTakes(input)]).toEqual([field, value, resolverTakes(input)]);
      }
    },
  );

  it('strategy: the same names', () => {
    for (const strategy of [...GROUP_STRATEGIES, 'random']) {
      const input = {
        source,
        strategy,
        ...(strategy === 'pinned_by_key' ? { keyPath: 'body.id' } : {}),
      };
      expect([strategy, dtoTakes(input)]).toEqual([strategy, resolverTakes(input)]);
    }
  });

  it('keyPath: the same length', () => {
    for (const length of [200, 201]) {
      const input = {
        source,
        strategy: 'pinned_by_key',
        keyPath: `body.${'k'.repeat(length - 5)}`,
      };
      expect([length, dtoTakes(input)]).toEqual([length, resolverTakes(input)]);
    }
  });
});
