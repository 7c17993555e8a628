import { joinNegativeValues } from './command.js';
import { splitConnectionFlags, urlFlag } from './connection-flags.js';

describe('splitConnectionFlags', () => {
  it('takes --url and --token out wherever they stand, in either form', () => {
    // Given the flags before, between and after the command's words
    const { words, flags } = splitConnectionFlags([
      '--url',
      'http://a:1',
      'projections',
      '--token=t',
      'list',
      '--json',
    ]);
    // Then the command's words stay in order and the flags come apart
    expect(words).toEqual(['projections', 'list', '--json']);
    expect(flags).toEqual(['--url', 'http://a:1', '--token=t']);
    expect(urlFlag(flags)).toBe('http://a:1');
    expect(urlFlag(['--token', '--url', '--url=http://b:2'])).toBe('http://b:2');
  });

  it('leaves a flag without a value, and everything after --, to the command', () => {
    expect(splitConnectionFlags(['status', '--url'])).toEqual({
      words: ['status', '--url'],
      flags: [],
    });
    expect(splitConnectionFlags(['publish', '--', '--token', 'x']).flags).toEqual([]);
  });
});

describe('joinNegativeValues', () => {
  const options = { from: { type: 'string' as const }, json: { type: 'boolean' as const } };

  it('joins a negative number to the string flag before it', () => {
    expect(joinNegativeValues(['--from', '-5', '--json'], options)).toEqual([
      '--from=-5',
      '--json',
    ]);
  });

  it('leaves boolean flags, other dashes and what follows -- alone', () => {
    expect(joinNegativeValues(['--json', '-5'], options)).toEqual(['--json', '-5']);
    expect(joinNegativeValues(['--from', '-x'], options)).toEqual(['--from', '-x']);
    expect(joinNegativeValues(['--', '--from', '-5'], options)).toEqual(['--', '--from', '-5']);
  });
});
