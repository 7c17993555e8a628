import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { OrdinalHttpError } from '@ordinal/client';
import type { PublishMessage } from '@ordinal/client';
import type { Command, CommandContext } from '../command.js';
import { CliError, UsageError } from '../cli-error.js';
import { ProgressBar } from '../progress-bar.js';
import { index, json } from './args.js';
import { publishBatches } from './publish-batches.js';

export const publishCommand: Command = {
  name: 'publish',
  usage:
    'publish <type> <json> [--user U] [--key K] [--metadata JSON] [--json]  |  publish --file events.ndjson [--batch N [--from-line L]]',
  summary:
    'Publishes one message and prints its stored index, or imports a file of messages (one JSON object a line), with a progress bar on stderr.',
  details: [
    'Flags:',
    '  --user U         the userId (sharding key)',
    '  --key K          an idempotency key: a repeat returns the original message',
    '  --metadata JSON  a JSON object stored beside the body',
    '  --json           print the stored message, not only its index',
    '  --file PATH      import PATH: each line {"messageType", "content", "userId"?, "metadata"?, "idempotencyKey"?,',
    '                   "correlationId"?, "causationId"?}, streamed to POST /api/events/import (admin scope):',
    '                   one transaction, one contiguous range, all or nothing; lines without a correlationId share a new one',
    '  --batch N        import through POST /api/events/messages instead, N (1-1000) a request, each batch atomic (write scope;',
    '                   lines without a correlationId share a new one per batch). Every line is checked first with the',
    "                   server's rules: a bad line publishes nothing. A failed batch stops the import, names the file lines",
    '                   stored and prints the command that resumes',
    '  --from-line L    with --batch: publish the file from line L (blank lines counted, as an editor numbers them)',
    '',
    'Examples:',
    `  ordinal publish OrderPlaced '{"orderId":"o-1"}' --user customer-1`,
    '  ordinal publish --file events.ndjson',
  ].join('\n'),
  options: {
    user: { type: 'string' },
    key: { type: 'string' },
    metadata: { type: 'string' },
    json: { type: 'boolean' },
    file: { type: 'string' },
    batch: { type: 'string' },
    'from-line': { type: 'string' },
  },
  async run(context) {
    if (typeof context.values.file === 'string') return importFile(context, context.values.file);
    const [type, body, ...extra] = context.positionals;
    if (!type || body === undefined || extra.length > 0)
      throw new UsageError(
        'publish needs a message type and a JSON body (or --file); see ordinal publish --help',
      );
    const message: PublishMessage = { messageType: type, content: json('The body', body) };
    if (typeof context.values.user === 'string') message.userId = context.values.user;
    if (typeof context.values.key === 'string') message.idempotencyKey = context.values.key;
    if (typeof context.values.metadata === 'string')
      message.metadata = json('--metadata', context.values.metadata) as Record<string, unknown>;
    const result = await context.client().publish(message);
    if (result.status === 'duplicate') {
      context.term.err(
        `Not stored: the same body was stored recently (content hash ${result.contentHash}; the duplicate window)\n`,
      );
      return;
    }
    if (result.status === 'repeat')
      context.term.err(
        `Already stored with idempotency key '${message.idempotencyKey}': the original message\n`,
      );
    context.term.out(
      context.values.json ? JSON.stringify(result.message) + '\n' : `${result.message.id}\n`,
    );
  },
};

async function importFile(context: CommandContext, path: string): Promise<number> {
  if (context.positionals.length > 0)
    throw new UsageError(
      'publish --file takes no type or body: each line of the file is a message',
    );
  const fromLine =
    context.values['from-line'] === undefined
      ? 1
      : index('--from-line', context.values['from-line'] as string, 1);
  if (context.values.batch === undefined) {
    if (fromLine > 1)
      throw new UsageError(
        '--from-line needs --batch: without it the import is all or nothing, so rerun the whole file',
      );
    return streamFile(context, path);
  }
  const batch = index('--batch', context.values.batch as string, 1);
  if (batch > 1000)
    throw new UsageError(
      '--batch is at most 1000 (the server stores a batch atomically, up to 1,000)',
    );
  return publishBatches(context, path, batch, fromLine);
}

/**
 * Streams the file to the bulk import route as it is read (a progress bar by bytes sent):
 * the server checks every line and stores all of them in one transaction, or none.
 */
async function streamFile(context: CommandContext, path: string): Promise<number> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch (error) {
    throw new CliError(`Cannot read ${path}: ${(error as Error).message}`);
  }
  const bar = new ProgressBar(context.term, 'Sending', size);
  let sent = 0;
  bar.update(0);
  const counting = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      sent += chunk.length;
      bar.update(sent);
      done(null, chunk);
    },
  });
  const file = createReadStream(path, { highWaterMark: 256 * 1024 });
  let unreadable: Error | null = null;
  file.once('error', (error) => {
    unreadable = error;
    counting.destroy(error);
  });
  const body = Readable.toWeb(file.pipe(counting)) as ReadableStream<Uint8Array>;
  let result;
  try {
    result = await context.client().importNdjson(body);
  } catch (error) {
    bar.done();
    if (unreadable) throw new CliError(`Cannot read ${path}: ${(unreadable as Error).message}`);
    const line =
      error instanceof OrdinalHttpError
        ? (error.body as { line?: unknown; message?: string } | undefined)
        : undefined;
    if (line && typeof line.line === 'number' && typeof line.message === 'string') {
      throw new CliError(`${path}:${line.line} ${line.message.replace(/^Line \d+: /, '')}`);
    }
    throw error;
  }
  bar.done();
  const range = result.first === null ? '' : `, indices ${result.first}..${result.last}`;
  context.term.out(
    `Imported ${result.lines} messages from ${path}: ${result.imported} stored, ${result.repeats} idempotent repeats${range}\n`,
  );
  return 0;
}
