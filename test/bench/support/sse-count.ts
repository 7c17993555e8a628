import http from 'node:http';

const MESSAGE = Buffer.from('event: message\n');
const ENDED = Buffer.from('event: stream-ended\n');

/** One stream read to its end, counting `message` events with as little client work as possible. */
export interface StreamCount {
  messages: number;
  bytes: number;
  ms: number;
}

function occurrences(haystack: Buffer, needle: Buffer): number {
  let count = 0;
  for (
    let at = haystack.indexOf(needle);
    at >= 0;
    at = haystack.indexOf(needle, at + needle.length)
  )
    count++;
  return count;
}

/** Streams `[startIndex, endIndex]` and resolves at `stream-ended`. */
export function countStream(
  baseUrl: string,
  headers: Record<string, string>,
  startIndex: number,
  endIndex: number,
  agent: http.Agent,
): Promise<StreamCount> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = http.get(
      `${baseUrl}/api/events/stream?startIndex=${startIndex}&endIndex=${endIndex}`,
      { headers, agent },
      (response) => {
        if (response.statusCode !== 200)
          return reject(new Error(`Stream answered ${response.statusCode}`));
        let messages = 0;
        let bytes = 0;
        let tail: Buffer = Buffer.alloc(0);
        let ended = false;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          // Keep the last few bytes so an event name split across chunks is still counted once.
          const window = tail.length > 0 ? Buffer.concat([tail, chunk]) : chunk;
          messages += occurrences(window, MESSAGE) - occurrences(tail, MESSAGE);
          if (!ended && window.includes(ENDED)) ended = true;
          tail = window.subarray(Math.max(0, window.length - (ENDED.length - 1)));
        });
        response.on('end', () =>
          ended
            ? resolve({ messages, bytes, ms: performance.now() - started })
            : reject(new Error(`Stream closed before stream-ended after ${messages} messages`)),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
  });
}
