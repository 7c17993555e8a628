import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import type { OrdinalMessage } from '@ordinal/contract';
import { jsonText } from './json-text.js';
import { SseWriter } from './sse-writer.js';

/** A response that records what is written (nothing is ever buffered in its socket). */
class RecordingResponse extends EventEmitter {
  written = '';
  writableLength = 0;
  destroyed = false;
  write(text: string): boolean {
    this.written += text;
    return true;
  }
  end(): void {
    this.emit('close');
  }
}

function writer(): { sse: SseWriter; raw: RecordingResponse } {
  const raw = new RecordingResponse();
  return { sse: new SseWriter(raw as unknown as ServerResponse), raw };
}

const message: OrdinalMessage = {
  id: 7,
  messageType: 'OrderPlaced',
  userId: null,
  body: { a: 1 },
  metadata: null,
  contentHash: 'h',
  createdAt: '2026-01-01T00:00:00.000Z',
};

describe('SseWriter', () => {
  it('writes each contract event as its frame, byte for byte', () => {
    // Given a writer
    const { sse, raw } = writer();
    // When every kind of event is written
    sse.send({ event: 'connected', data: { startIndex: 1, headIndex: 4 } }, undefined, 2000);
    sse.sendMessage('message', jsonText(message), 7);
    sse.sendMessage('late-message', jsonText(message));
    sse.send({ event: 'heartbeat', data: { headIndex: 9 } });
    sse.send({ event: 'stream-ended', data: { endIndex: 9, lastIndex: null } }, 9);
    sse.end();
    // Then the frames are the protocol's, the message's JSON text written as given
    const json = JSON.stringify(message);
    expect(raw.written).toBe(
      'event: connected\nretry: 2000\ndata: {"startIndex":1,"headIndex":4}\n\n' +
        `event: message\nid: 7\ndata: {"message":${json}}\n\n` +
        `event: late-message\ndata: {"message":${json}}\n\n` +
        'event: heartbeat\ndata: {"headIndex":9}\n\n' +
        'event: stream-ended\nid: 9\ndata: {"endIndex":9,"lastIndex":null}\n\n',
    );
  });

  it('accepts only the contract (the type errors below are the test)', () => {
    const { sse } = writer();
    sse.end();
    // @ts-expect-error heartbeat's data is { headIndex }
    sse.send({ event: 'heartbeat', data: { startIndex: 1 } });
    // @ts-expect-error an unknown event
    sse.send({ event: 'hello', data: {} });
    // @ts-expect-error message events are written from JSON text, by sendMessage
    sse.send({ event: 'message', data: { message } });
    // @ts-expect-error a plain string is not JSON text of a message
    sse.sendMessage('message', '{}', 1);
    // @ts-expect-error heartbeat is not a message event
    sse.sendMessage('heartbeat', jsonText(message));
    expect(sse.closed).toBe(true);
  });
});
