import type { Command, CommandContext } from '../command.js';
import { UsageError } from '../cli-error.js';
import type { ScavengeRunBody, StreamMetadataBody } from '../server-bodies.js';
import { index, json } from './args.js';

/** One stream id (or `order-*` where allowed) from the positionals, else a usage error. */
function oneId(command: string, positionals: string[]): string {
  const [id, ...extra] = positionals;
  if (!id || extra.length > 0) throw new UsageError(`${command} needs one stream id`);
  return id;
}

export const streamsDeleteCommand: Command = {
  name: 'streams delete',
  usage: 'streams delete <streamId> [--tombstone] [--expected-version N]',
  summary:
    'Deletes a stream (docs/lifecycle.md): soft by default (its events become tombstones; appending with no_stream re-creates it after its last version); --tombstone ends it for ever. Needs a write token.',
  details:
    'Flags:\n  --tombstone            every later call on the stream answers 410, for ever\n  --expected-version N   only if the stream is at version N',
  options: { tombstone: { type: 'boolean' }, 'expected-version': { type: 'string' } },
  async run({ values, positionals, term, client }) {
    const id = oneId('streams delete', positionals);
    const query = new URLSearchParams();
    if (values.tombstone) query.set('mode', 'tombstone');
    if (values['expected-version'] !== undefined)
      query.set(
        'expectedVersion',
        String(index('--expected-version', values['expected-version'] as string)),
      );
    const suffix = query.size > 0 ? `?${query}` : '';
    await client().request('DELETE', `/api/streams/${encodeURIComponent(id)}${suffix}`);
    term.out(`Stream ${id} ${values.tombstone ? 'tombstoned' : 'deleted'}\n`);
  },
};

export const streamsMetadataCommand: Command = {
  name: 'streams metadata',
  usage: "streams metadata <streamId|category-*> [--set '<json>'] [--expected-version N]",
  summary:
    "Shows a stream's (or a category's, `order-*`) metadata; --set replaces it: maxAge (seconds), maxCount, truncateBefore, custom. Setting needs a write token.",
  details:
    'Flags:\n  --set JSON             the new metadata, e.g. \'{"maxAge": 2592000}\'\n  --expected-version N   only if the metadata is at version N',
  options: { set: { type: 'string' }, 'expected-version': { type: 'string' } },
  async run({ values, positionals, term, client }) {
    const id = oneId('streams metadata', positionals);
    const path = `/api/streams/${encodeURIComponent(id).replaceAll('%2A', '*')}/metadata`;
    if (values.set === undefined) {
      const { body } = await client().request<StreamMetadataBody>('GET', path);
      return void term.out(JSON.stringify(body) + '\n');
    }
    const metadata = json('--set', values.set as string);
    const expected =
      values['expected-version'] === undefined
        ? ''
        : `?expectedVersion=${index('--expected-version', values['expected-version'] as string)}`;
    const { body } = await client().request<StreamMetadataBody>('PUT', path + expected, metadata);
    term.out(JSON.stringify(body) + '\n');
  },
};

/** Runs a scavenge and prints its record (shared by `scavenge` and `streams scavenge`). */
async function scavenge({ values, term, client }: CommandContext): Promise<void> {
  const wait = !values['no-wait'];
  const query = new URLSearchParams({ wait: String(wait) });
  if (values['batch-size'] !== undefined)
    query.set('batchSize', String(index('--batch-size', values['batch-size'] as string, 1)));
  if (values.throttle !== undefined)
    query.set('throttlePercent', String(index('--throttle', values.throttle as string, 1)));
  const { body } = await client().request<ScavengeRunBody>('POST', `/api/admin/scavenge?${query}`);
  if (values.json) return void term.out(JSON.stringify(body) + '\n');
  term.out(
    wait
      ? `Scavenge run ${body.id} ${body.status}: ${body.rowsErased} rows erased, ${body.bytesFreed} bytes freed, up to index ${body.through}` +
          (body.tableBytesAfter === null
            ? '\n'
            : `; table ${body.tableBytesBefore} → ${body.tableBytesAfter} bytes\n`)
      : `Scavenge run ${body.id} started (up to index ${body.through}); follow it with ordinal status\n`,
  );
}

const SCAVENGE = {
  usage: '[--no-wait] [--batch-size N] [--throttle P] [--json]',
  summary:
    'Erases in place the body and metadata of every message a delete or a retention rule hides (docs/lifecycle.md); resumes a run a crash left unfinished. Needs an admin token.',
  details:
    "Flags:\n  --no-wait        start it and return (ordinal status shows its progress)\n  --batch-size N   indices per batch (default 1000)\n  --throttle P     the percent of its time the run works, 1-100 (default: the server's, 25; 100: full speed)\n  --json           the run as JSON",
  options: {
    'no-wait': { type: 'boolean' },
    'batch-size': { type: 'string' },
    throttle: { type: 'string' },
    json: { type: 'boolean' },
  },
} as const;

export const scavengeCommand: Command = {
  name: 'scavenge',
  ...SCAVENGE,
  usage: `scavenge ${SCAVENGE.usage}`,
  run: scavenge,
};

export const streamsScavengeCommand: Command = {
  name: 'streams scavenge',
  ...SCAVENGE,
  usage: `streams scavenge ${SCAVENGE.usage}`,
  run: scavenge,
};
