import fc from 'fast-check';
import { inexactNumberIn } from './exact-numbers.js';

describe('inexactNumberIn', () => {
  it('finds numbers JSON.parse would round, with their path', () => {
    expect(inexactNumberIn('{"a":[1,{"b c":1.00000000000000000001}]}', 'content')).toEqual({
      path: 'content.a.1["b c"]',
      reason: expect.stringMatching(/1\.00000000000000000001, .* reads as 1\);/) as unknown,
    });
    expect(inexactNumberIn('{"n":1e-400}', '')?.path).toBe('n');
    expect(inexactNumberIn('{"n":1e400}', '')?.path).toBe('n');
    expect(inexactNumberIn('{"messages":[{"content":{"n":9007199254740993}}]}', '')?.path).toBe(
      'messages.0.content.n',
    );
    expect(inexactNumberIn('{"n":12345678901234567890}', '')?.reason).toMatch(
      /reads as 12345678901234567000/,
    );
    expect(inexactNumberIn('[0,"1e999",{"k\\"":123456789012345678}]', 'x')?.path).toBe(
      'x.2["k\\""]',
    );
  });

  it('lets every number through that reads back as written', () => {
    for (const text of [
      '0.1',
      '-0',
      '1.5e-7',
      '1E+2',
      '123.4560',
      '0.30000000000000004',
      '9007199254740991',
      '-2.5e-300',
      '1e21',
      '100',
      '9007199254740992',
      '1e20',
      '100000000000000000000',
      '6.02e23',
      '1.5e300',
      '-1.7976931348623157e308',
    ]) {
      expect([text, inexactNumberIn(`{"n":${text}}`, '')]).toEqual([text, null]);
    }
  });

  it('agrees with JSON.parse on random doubles written in their shortest form (property)', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (n) => {
        expect(inexactNumberIn(`[${JSON.stringify(n)}]`, '')).toBeNull();
      }),
    );
  });
});
