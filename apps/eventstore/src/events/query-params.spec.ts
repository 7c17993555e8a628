import { BadRequestException } from '@nestjs/common';
import {
  correlationParam,
  intParam,
  singleParam,
  startParam,
  tombstonesParam,
  typesParam,
} from './query-params.js';

/** The body of the 400 a call throws. */
function refusalOf(call: () => unknown): Record<string, unknown> {
  try {
    call();
  } catch (error) {
    if (error instanceof BadRequestException) return error.getResponse() as Record<string, unknown>;
    throw error;
  }
  throw new Error('no 400 was thrown');
}

describe('query parameters: every 400 has a code and names the parameter', () => {
  it('reads a parameter given once, and its absence', () => {
    expect(singleParam('types', 'A')).toBe('A');
    expect(singleParam('types', undefined)).toBeUndefined();
    expect(intParam('limit', undefined, 100, 1, 10)).toBe(100);
    expect(startParam('fromIndex', '9007199254740992', 1, 1)).toBe(2 ** 53);
    expect(typesParam('A, B.c')).toEqual(['A', 'B.c']);
    expect(correlationParam('c-1')).toBe('c-1');
    expect(tombstonesParam('skip')).toBe('skip');
  });

  it('refuses a repeated parameter with repeated_parameter', () => {
    expect(refusalOf(() => singleParam('types', ['A', 'B']))).toEqual({
      message: 'types is given 2 times; send it once',
      code: 'repeated_parameter',
      parameter: 'types',
    });
  });

  it.each<[string, () => unknown, string, string | RegExp]>([
    ['not text', () => singleParam('since', { a: '1' }), 'since', 'since must be text'],
    [
      'not an integer',
      () => intParam('startIndex', 'abc', 1),
      'startIndex',
      "startIndex must be an integer, got 'abc'",
    ],
    [
      'out of range',
      () => intParam('limit', '0', 100, 1, 10_000),
      'limit',
      'limit must be between 1 and 10000, got 0',
    ],
    ['past 2^53', () => startParam('fromIndex', '9007199254740993', 1, 1), 'fromIndex', /between/],
    ['a bad type', () => typesParam('A,b c'), 'types', /^types: 'b c' is not a message type/],
    ['a long correlation id', () => correlationParam('c'.repeat(201)), 'correlationId', /201/],
    ['an empty correlation id', () => correlationParam(''), 'correlationId', /0 characters/],
    ['an unknown tombstones', () => tombstonesParam('hide'), 'tombstones', /include or skip/],
  ])('refuses %s with invalid_parameter', (_name, call, parameter, message) => {
    const { message: said, ...rest } = refusalOf(call);
    expect(rest).toEqual({ code: 'invalid_parameter', parameter });
    if (typeof message === 'string') expect(said).toBe(message);
    else expect(said).toMatch(message);
  });
});
