import { OrdinalHttpError, type PublishResult } from '@ordinal/client';
import type { CommandContext } from '../command.js';
import { ProgressBar } from '../progress-bar.js';
import { readCheckedNdjson, type NumberedMessage } from './ndjson-lines.js';

/** An argument as a POSIX shell reads it back unchanged. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command that publishes the file from `line` on, as typed (with `--url` if given; a
 * `--token` flag's value is not repeated on stderr: the placeholder says to add it).
 */
function resumeCommand(context: CommandContext, path: string, batch: number, line: number) {
  const words = ['publish', '--file', path, '--batch', String(batch), '--from-line', String(line)];
  if (typeof context.values.url === 'string') words.push('--url', context.values.url);
  const command = `ordinal ${words.map(shellWord).join(' ')}`;
  return typeof context.values.token === 'string' ? `${command} --token <your token>` : command;
}

/** Whether a failed batch may have been stored anyway: the answer was lost, or says so. */
function outcomeUnknown(error: unknown): boolean {
  if (!(error instanceof OrdinalHttpError)) return true;
  return (error.body as { outcomeUnknown?: unknown } | undefined)?.outcomeUnknown === true;
}

/**
 * `publish --file F --batch N [--from-line L]`: the whole file is checked first (a bad line
 * publishes nothing), then sent N messages a request to `POST /api/events/messages`, each
 * batch atomic. A batch that fails stops the import with the file lines that are stored and
 * the exact command that resumes at the first line that is not.
 */
export async function publishBatches(
  context: CommandContext,
  path: string,
  batch: number,
  fromLine: number,
): Promise<number> {
  const messages = await readCheckedNdjson(path, fromLine);
  const client = context.client();
  const bar = new ProgressBar(context.term, 'Importing', messages.length);
  const counts = { created: 0, repeat: 0, duplicate: 0, key_reused: 0 };
  let first: number | null = null;
  let last: number | null = null;
  bar.update(0);
  for (let offset = 0; offset < messages.length; offset += batch) {
    const chunk = messages.slice(offset, offset + batch);
    let results: PublishResult[];
    try {
      results = await client.publishBatch(chunk.map((m) => m.message));
    } catch (error) {
      bar.done();
      context.term.err(stopped(context, path, batch, fromLine, messages, offset, chunk, error));
      throw error;
    }
    for (const r of results) {
      counts[r.status]++;
      if (r.status === 'created' || r.status === 'repeat') {
        first ??= r.message.id;
        last = r.message.id;
      }
    }
    bar.update(Math.min(messages.length, offset + batch));
  }
  bar.done();
  const range = first === null ? '' : `, indices ${first}..${last}`;
  const from = fromLine > 1 ? ` (from line ${fromLine})` : '';
  context.term.out(
    `Imported ${messages.length} messages from ${path}${from}: ${counts.created} stored, ${counts.repeat} idempotent repeats, ${counts.duplicate} duplicates${counts.key_reused > 0 ? `, ${counts.key_reused} refused (idempotency key reused with another message)` : ''}${range}\n`,
  );
  return 0;
}

/** What a stopped import says: the failed batch's lines, what is stored, how to resume. */
function stopped(
  context: CommandContext,
  path: string,
  batch: number,
  fromLine: number,
  messages: NumberedMessage[],
  offset: number,
  chunk: NumberedMessage[],
  error: unknown,
): string {
  const start = chunk[0].line;
  const end = chunk[chunk.length - 1].line;
  const storedBefore =
    offset === 0
      ? 'nothing before it was stored by this run'
      : `${offset} messages from lines ${fromLine}..${start - 1} are stored`;
  const lastLine = messages[messages.length - 1].line;
  const fate = outcomeUnknown(error)
    ? `the answer for the batch of lines ${start}..${end} was lost, so it may or may not be stored (a line with an idempotencyKey is never stored twice: check with ordinal tail before resuming); ${storedBefore}${end < lastLine ? `; lines ${end + 1}..${lastLine} are not` : ''}`
    : `the batch of lines ${start}..${end} was not stored (a batch is atomic); ${storedBefore}; lines ${start}..${lastLine} are not`;
  return (
    `Stopped at ${path}:${start}: ${fate}.\n` +
    `To resume: ${resumeCommand(context, path, batch, start)}\n`
  );
}
