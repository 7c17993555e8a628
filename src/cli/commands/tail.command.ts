import { isRetryable } from '@ordinal/client';
import type { Command } from '../command.js';
import { UsageError } from '../cli-error.js';
import { messageLine } from '../format.js';
import { index } from './args.js';

export const tailCommand: Command = {
  name: 'tail',
  usage: 'tail [--types A,B] [--from N] [--until N] [--json]',
  summary:
    'Messages as they arrive, one per line (Ctrl-C stops). Reconnects by itself after the first connection, from the last index shown.',
  details: [
    'Flags:',
    '  --types A,B    only these message types',
    '  --from N       start at index N (default: the next message, live only)',
    '  --until N      stop after index N',
    '  --json         one JSON object per line (the stored message)',
  ].join('\n'),
  options: {
    types: { type: 'string' },
    from: { type: 'string' },
    until: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run({ values, term, client: clientOf }) {
    const client = clientOf();
    const types =
      typeof values.types === 'string'
        ? values.types
            .split(',')
            .map((t) => t.trim())
            .filter(Boolean)
        : undefined;
    const until = values.until === undefined ? undefined : index('--until', values.until as string);
    let next =
      values.from === undefined
        ? (await client.head()) + 1
        : index('--from', values.from as string, 1);
    if (until !== undefined && until < next - 1 && values.from !== undefined)
      throw new UsageError(`--until ${until} is before --from ${next}`);
    const abort = new AbortController();
    const stop = () => abort.abort(new Error('stopped'));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    let connectedOnce = false;
    try {
      for (;;) {
        try {
          for await (const event of client.stream({
            startIndex: next,
            endIndex: until,
            types,
            signal: abort.signal,
          })) {
            connectedOnce = true;
            if (event.event === 'message' || event.event === 'late-message') {
              term.out(
                values.json
                  ? JSON.stringify(event.message) + '\n'
                  : messageLine(event.message) +
                      (event.event === 'late-message' ? '  (late)' : '') +
                      '\n',
              );
              if (event.event === 'message') next = event.message.id + 1;
            } else if (event.event === 'stream-ended') {
              return 0;
            }
          }
        } catch (error) {
          if (abort.signal.aborted) return 0;
          if (!connectedOnce || !isRetryable(error)) throw error;
          term.err(`Stream lost (${(error as Error).message}); reconnecting from ${next}\n`);
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
        if (abort.signal.aborted) return 0;
      }
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    }
  },
};
