import http from 'node:http';
import https from 'node:https';

/** A request with a JSON (or no) body, as the client's `request` sends it. */
export interface JsonRequest {
  method: string;
  headers: Record<string, string>;
  body?: string;
}

/** What the client needs of an answer: its status and its whole body as text. */
export interface TextResponse {
  ok: boolean;
  status: number;
  statusText: string;
  text: string;
}

/** Sends one request and reads its whole answer. */
export type JsonTransport = (url: string, request: JsonRequest) => Promise<TextResponse>;

/** Through a `fetch` implementation (one the caller gave, or a runtime's own). */
export function fetchTransport(fetchImpl: typeof fetch): JsonTransport {
  return async (url, request) => {
    const response = await fetchImpl(url, request);
    return {
      ok: response.ok,
      status: response.status,
      statusText: response.statusText,
      text: await response.text(),
    };
  };
}

/**
 * Through `node:http` / `node:https` and their global agents (which keep connections alive):
 * about half the CPU per request of Node's `fetch` (undici's web streams), most of a consumer
 * group member's own cost (docs/performance.md, "Consumer groups"). Errors are Node's (a `code`
 * such as `ECONNREFUSED`), never an `OrdinalHttpError`.
 */
export const nodeTransport: JsonTransport = (url, request) =>
  new Promise((resolve, reject) => {
    const target = new URL(url);
    const send = target.protocol === 'https:' ? https.request : http.request;
    const outgoing = send(
      target,
      { method: request.method, headers: request.headers },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('error', reject);
        answer.on('end', () => {
          const status = answer.statusCode ?? 0;
          resolve({
            ok: status >= 200 && status < 300,
            status,
            statusText: answer.statusMessage ?? '',
            text: Buffer.concat(chunks).toString('utf8'),
          });
        });
      },
    );
    outgoing.on('error', reject);
    // A Buffer, not a string: Node writes headers sent with a string body as UTF-8 (a header
    // value's characters are bytes here, as fetch takes them: see utf8Header), with a Buffer or
    // none as Latin-1, one byte per character.
    outgoing.end(request.body === undefined ? undefined : Buffer.from(request.body));
  });
