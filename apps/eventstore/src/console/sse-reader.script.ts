import { SSE_EVENT_NAMES, type SseEvent } from '@ordinal/contract';

/** Takes an event stream's decoded text, in chunks cut anywhere. */
export interface SseReader {
  push(text: string): void;
}

/**
 * The browser consoles' SSE parser: calls `onEvent` with each complete event whose name is in
 * `names` (others are skipped), its data parsed as JSON; a JSON error is thrown from `push`.
 * Lines end with LF, CRLF or CR; `event:` names the event (default `message`); `data:` lines
 * are joined with LF; anything else (`id:`, `retry:`, comments) is ignored.
 *
 * It runs in the browser as its compiled source (`SSE_READER_SCRIPT`), so it must stay
 * self-contained: no imports, nothing from this module's scope, no syntax the compiler turns
 * into a helper. The spec runs that source alone in an empty context.
 */
export function createSseReader(
  names: readonly string[],
  onEvent: (event: SseEvent) => void,
): SseReader {
  let buffer = '';
  let carriedCr = false;
  return {
    push(chunk) {
      let text = carriedCr ? '\r' + chunk : chunk;
      // A CR at the end may be the first half of a CRLF cut between chunks: wait for the next one.
      carriedCr = text.endsWith('\r');
      if (carriedCr) text = text.slice(0, -1);
      buffer += text.replace(/\r\n?/g, '\n');
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (data.length > 0 && names.includes(event))
          onEvent({ event, data: JSON.parse(data.join('\n')) as unknown } as SseEvent);
      }
    },
  };
}

/**
 * Browser JavaScript declaring `sseReader(onEvent)`: `createSseReader` over the contract's
 * event names. Both consoles put it inside their script.
 */
export const SSE_READER_SCRIPT =
  `const sseReader = (onEvent) => (${createSseReader.toString()})` +
  `(${JSON.stringify(SSE_EVENT_NAMES)}, onEvent);`;
