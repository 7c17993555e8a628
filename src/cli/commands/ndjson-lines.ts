import { readFile } from 'node:fs/promises';
import type { PublishMessage } from '@ordinal/client';
import { CliError } from '../cli-error.js';

/** One message of a file, with the number of the file line it is on (blank lines counted). */
export interface NumberedMessage {
  line: number;
  message: PublishMessage;
}

/** Refused lines named before the command gives up (the count says how many more). */
const NAMED = 5;

/**
 * Reads an NDJSON file and checks every message line from `fromLine` on with the server's own
 * rule for one line (`parseImportLine` of @ordinal/log: fields, type pattern, lengths, exact
 * numbers, ids), before anything is sent: a file with a bad line publishes nothing. Lines are
 * numbered as in the file, blank lines included, so `file:line` is where an editor goes.
 */
export async function readCheckedNdjson(path: string, fromLine = 1): Promise<NumberedMessage[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new CliError(`Cannot read ${path}: ${(error as Error).message}`);
  }
  // The library holds the rule; loaded only here, so other commands start without it.
  const [{ parseImportLine }, { InvalidMessageError }] = await Promise.all([
    import('@ordinal/log/internal'),
    import('@ordinal/log'),
  ]);
  const messages: NumberedMessage[] = [];
  const refused: string[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (i + 1 < fromLine || line === '') return;
    try {
      parseImportLine(line);
    } catch (error) {
      if (!(error instanceof InvalidMessageError)) throw error;
      refused.push(`${path}:${i + 1} ${error.message}`);
      return;
    }
    messages.push({ line: i + 1, message: JSON.parse(line) as PublishMessage });
  });
  if (refused.length > 0) {
    const more = refused.length > NAMED ? ` (and ${refused.length - NAMED} more lines)` : '';
    throw new CliError(
      `${refused.slice(0, NAMED).join('; ')}${more}; nothing was published: fix ${refused.length === 1 ? 'the line' : 'these lines'} and run the command again`,
    );
  }
  return messages;
}
