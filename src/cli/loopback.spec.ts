import { isLoopback } from './command.js';

describe('isLoopback (the CLI sends the development token only to a server on this machine)', () => {
  it.each([
    'http://localhost:8083',
    'http://LOCALHOST:8083/',
    'http://app.localhost:8083',
    'http://127.0.0.1:8083',
    'http://127.1.2.3',
    'http://[::1]:8083',
  ])('%s is this machine', (url) => {
    expect(isLoopback(url)).toBe(true);
  });

  it.each([
    'https://ordinal.example.com',
    'http://10.0.0.5:8083',
    'http://127.0.0.1.example.com',
    'http://[::2]:8083',
    'http://0.0.0.0:8083',
    'not a url',
  ])('%s is not', (url) => {
    expect(isLoopback(url)).toBe(false);
  });
});
