import type { StreamEvent } from './client-types.js';
import { openEventStream } from './event-stream.js';

/** A fetch answering 200 with `chunks` as the event stream's body. */
function streaming(chunks: string[]): typeof fetch {
  return () => {
    const encoder = new TextEncoder();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
        controller.close();
      },
    });
    return Promise.resolve(new Response(body, { status: 200 }));
  };
}

const message = { id: 2, messageType: 'A', userId: null, body: {}, metadata: null };

describe('openEventStream', () => {
  it("yields each of the contract's events with its data's fields beside `event`", async () => {
    // Given a stream with every event the server sends, and one it does not
    const json = JSON.stringify(message);
    const fetchImpl = streaming([
      'event: connected\nretry: 2000\ndata: {"startIndex":1,"headIndex":4}\n\n',
      `event: message\nid: 2\ndata: {"message":${json}}\n\nevent: late-message\n`,
      `data: {"message":${json}}\n\nevent: other\ndata: {}\n\n`,
      'event: heartbeat\ndata: {"headIndex":4}\n\n',
      'event: stream-ended\nid: 2\ndata: {"endIndex":2,"lastIndex":2}\n\n',
    ]);
    // When it is read
    const events: StreamEvent[] = [];
    for await (const event of openEventStream('http://x/api/events/stream', {}, {}, fetchImpl))
      events.push(event);
    // Then the known events come flat, in order
    expect(events).toEqual([
      { event: 'connected', startIndex: 1, headIndex: 4 },
      { event: 'message', message },
      { event: 'late-message', message },
      { event: 'heartbeat', headIndex: 4 },
      { event: 'stream-ended', endIndex: 2, lastIndex: 2 },
    ]);
  });

  it('types each event by its name', () => {
    const ended: StreamEvent = { event: 'stream-ended', endIndex: 2, lastIndex: null };
    // @ts-expect-error heartbeat carries headIndex
    const heartbeat: StreamEvent = { event: 'heartbeat' };
    // @ts-expect-error connected carries no message
    const connected: StreamEvent = { event: 'connected', startIndex: 1, headIndex: 1, message };
    expect([ended, heartbeat, connected]).toHaveLength(3);
  });
});
