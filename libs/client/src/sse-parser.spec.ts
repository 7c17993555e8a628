import { decodeSseEvent, SseParser } from './sse-parser.js';

describe('SseParser', () => {
  it('parses events split anywhere across chunks, with LF, CRLF and CR line ends', () => {
    // Given a stream of three events with comments and mixed line ends
    const text =
      ': hello\nevent: connected\ndata: {"a":1}\n\r\nevent: message\r\nid: 7\r\ndata: {"m":\r\ndata: 2}\r\n\r\nevent: heartbeat\rdata: {}\r\r: more\n';
    // When it arrives one character at a time
    const parser = new SseParser();
    const events = [...text].flatMap((c) => parser.push(c));
    // Then each event is whole, in order
    expect(events).toEqual([
      { event: 'connected', id: undefined, data: '{"a":1}' },
      { event: 'message', id: '7', data: '{"m":\n2}' },
      { event: 'heartbeat', id: '7', data: '{}' },
    ]);
  });

  it('defaults the event name to message and skips blocks without data', () => {
    const parser = new SseParser();
    expect(parser.push('event: nothing\n\ndata:x\n\n')).toEqual([
      { event: 'message', id: undefined, data: 'x' },
    ]);
  });
});

describe('decodeSseEvent', () => {
  it('maps a raw event to the contract’s event, and skips names the stream does not send', () => {
    expect(decodeSseEvent({ event: 'heartbeat', data: '{"headIndex":3}' })).toEqual({
      event: 'heartbeat',
      data: { headIndex: 3 },
    });
    expect(
      decodeSseEvent({ event: 'stream-ended', id: '9', data: '{"endIndex":9,"lastIndex":null}' }),
    ).toEqual({ event: 'stream-ended', data: { endIndex: 9, lastIndex: null } });
    expect(decodeSseEvent({ event: 'error', data: '{}' })).toBeNull();
    expect(decodeSseEvent({ event: 'toString', data: '{}' })).toBeNull();
  });

  it('throws on data that is not JSON', () => {
    expect(() => decodeSseEvent({ event: 'message', data: '{"message":' })).toThrow(SyntaxError);
  });
});
