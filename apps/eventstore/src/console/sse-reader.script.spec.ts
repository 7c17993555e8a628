import { runInNewContext } from 'node:vm';
import type { SseEvent } from '@ordinal/contract';
import { createSseReader, SSE_READER_SCRIPT } from './sse-reader.script.js';

const NAMES = ['connected', 'message', 'heartbeat'];

/** A stream with a comment, an `id:`, mixed line ends, multi-line data and an unknown event. */
const STREAM =
  ': hello\nevent: connected\nretry: 2000\ndata: {"startIndex":1,"headIndex":4}\n\r\n' +
  'event: message\r\nid: 7\r\ndata: {"message":\r\ndata: {"id":7}}\r\n\r\n' +
  'event: unknown\ndata: {}\n\n' +
  'event: heartbeat\rdata: {"headIndex":9}\r\r: more\n';

const EXPECTED = [
  { event: 'connected', data: { startIndex: 1, headIndex: 4 } },
  { event: 'message', data: { message: { id: 7 } } },
  { event: 'heartbeat', data: { headIndex: 9 } },
];

describe('the consoles’ SSE reader', () => {
  it('yields each known event whole, in order, however the text is cut', () => {
    for (const size of [1, 2, 3, 7, STREAM.length]) {
      // Given the stream cut into chunks of `size` characters
      const events: SseEvent[] = [];
      const reader = createSseReader(NAMES, (event) => events.push(event));
      // When they arrive one by one
      for (let at = 0; at < STREAM.length; at += size) reader.push(STREAM.slice(at, at + size));
      // Then the events are the contract's, unknown names skipped
      expect(events).toEqual(EXPECTED);
    }
  });

  it('runs as the browser gets it: its source alone, in an empty context', () => {
    // Given nothing but the served script (no module scope, no Node globals)
    const run = `${SSE_READER_SCRIPT}
      const out = [];
      const reader = sseReader((event) => out.push(event));
      for (const c of text) reader.push(c);
      JSON.stringify(out);`;
    // When it reads the stream a character at a time
    const out: unknown = JSON.parse(runInNewContext(run, { text: STREAM }) as string);
    // Then it reads it like the module does
    expect(out).toEqual(EXPECTED);
  });
});
