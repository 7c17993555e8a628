import { BadRequestException } from '@nestjs/common';
import { parseStreamParams } from './sse-params.js';

/** The 400 a call throws. */
function refusalOf(call: () => unknown): BadRequestException {
  try {
    call();
  } catch (error) {
    if (error instanceof BadRequestException) return error;
    throw error;
  }
  throw new Error('no 400 was thrown');
}

describe('parseStreamParams (R1)', () => {
  it('defaults to the whole log, everything, no shard', () => {
    expect(parseStreamParams({})).toEqual({
      startIndex: 1,
      endIndex: undefined,
      types: [],
      shard: undefined,
      tombstones: 'include',
      tiers: 'all',
      finished: false,
    });
  });

  it('treats startIndex 0 as 1 and resumes after Last-Event-ID even with a startIndex', () => {
    expect(parseStreamParams({ startIndex: '0' }).startIndex).toBe(1);
    expect(parseStreamParams({ startIndex: '3', lastEventId: '41' }).startIndex).toBe(42);
  });

  it('starts at most one past the last index the log gives (2^53), checked on the text', () => {
    // A reader that has read index 2^53 − 1 of a full log resumes after it and waits there
    expect(parseStreamParams({ startIndex: '9007199254740992' }).startIndex).toBe(2 ** 53);
    expect(parseStreamParams({ lastEventId: '9007199254740991' }).startIndex).toBe(2 ** 53);
    // 2^53 + 1 would read as 2^53: refused, not rounded
    expect(() => parseStreamParams({ startIndex: '9007199254740993' })).toThrow(
      BadRequestException,
    );
  });

  it('reads types, an end and a shard', () => {
    expect(
      parseStreamParams({
        startIndex: '5',
        endIndex: '5',
        types: 'A,B.c',
        shardCount: '3',
        shardIndex: '2',
      }),
    ).toEqual({
      startIndex: 5,
      endIndex: 5,
      types: ['A', 'B.c'],
      shard: { count: 3, index: 2 },
      tombstones: 'include',
      tiers: 'all',
      finished: false,
    });
  });

  it('is finished when a resumed request is at or past endIndex (the stream answers 204)', () => {
    expect(parseStreamParams({ endIndex: '5', lastEventId: '5' }).finished).toBe(true);
    expect(parseStreamParams({ endIndex: '5', lastEventId: '9' }).finished).toBe(true);
    expect(parseStreamParams({ endIndex: '5', lastEventId: '4' }).finished).toBe(false);
    expect(parseStreamParams({ endIndex: '5' }).finished).toBe(false);
  });

  it.each([
    [{ startIndex: '-1' }, 'startIndex'],
    [{ startIndex: '1e3' }, 'startIndex'],
    [{ endIndex: 'x' }, 'endIndex'],
    [{ startIndex: '9', endIndex: '8' }, 'endIndex'],
    [{ shardCount: '2', shardIndex: '2' }, 'shardIndex'],
    [{ shardCount: '0', shardIndex: '0' }, 'shardCount'],
    [{ shardCount: '2' }, 'shardIndex'],
    [{ shardIndex: '1' }, 'shardCount'],
    [{ types: 'a b' }, 'types'],
    [{ tombstones: 'hide' }, 'tombstones'],
    [{ lastEventId: '-4' }, 'Last-Event-ID'],
  ])('refuses %j with invalid_parameter naming %s', (query, parameter) => {
    const refusal = refusalOf(() => parseStreamParams(query));
    expect(refusal.getResponse()).toMatchObject({ code: 'invalid_parameter', parameter });
  });
});

describe('parseStreamParams: tiers (docs/storage.md)', () => {
  it('reads all (the default) or hot, and refuses anything else with the parameter named', () => {
    expect(parseStreamParams({ tiers: 'hot' }).tiers).toBe('hot');
    expect(parseStreamParams({ tiers: 'all' }).tiers).toBe('all');
    expect(parseStreamParams({}).tiers).toBe('all');
    expect(() => parseStreamParams({ tiers: 'cold' })).toThrow(BadRequestException);
  });
});

describe('parseStreamParams: tombstones (docs/lifecycle.md)', () => {
  it('takes include or skip, and refuses anything else with a 400', () => {
    expect(parseStreamParams({ tombstones: 'skip' }).tombstones).toBe('skip');
    expect(parseStreamParams({}).tombstones).toBe('include');
    expect(() => parseStreamParams({ tombstones: 'hide' })).toThrow(
      /tombstones must be include or skip/,
    );
  });
});
