import type { Command } from '../command.js';
import { CliError, UsageError } from '../cli-error.js';
import { table } from '../format.js';
import type { SegmentBody, SegmentsBody, SegmentVerificationBody } from '../server-bodies.js';
import { index } from './args.js';

export const segmentsListCommand: Command = {
  name: 'segments list',
  usage: 'segments list [--json]',
  summary:
    "The log's segments (docs/storage.md): each partition of the messages table by index range, its tier, size on disk and estimated rows. Needs an admin token.",
  options: { json: { type: 'boolean' } },
  async run({ values, term, client }) {
    const { body } = await client().request<SegmentsBody>('GET', '/api/admin/segments');
    if (values.json) return void term.out(JSON.stringify(body) + '\n');
    const rows = body.segments.map((s) => [
      s.firstIndex,
      s.lastIndex,
      s.tier,
      s.estimatedRows,
      s.bytes,
      s.table,
    ]);
    term.out(
      `Segments of ${body.segmentSize} indices\n` +
        table(['FIRST', 'LAST', 'TIER', 'ROWS', 'BYTES', 'TABLE'], rows),
    );
  },
};

/** The segment's first index, the one positional of archive, restore and verify. */
function firstIndexOf(command: string, positionals: string[]): number {
  const [raw] = positionals;
  if (!raw)
    throw new UsageError(
      `segments ${command} needs the segment's first index (segments list shows them)`,
    );
  return index('FIRST_INDEX', raw, 1);
}

const segmentLine = (s: SegmentBody) =>
  `segment ${s.firstIndex}..${s.lastIndex} (${s.table}): ${s.tier}, ${s.estimatedRows ?? '?'} rows, ${s.bytes} bytes`;

export const segmentsArchiveCommand: Command = {
  name: 'segments archive',
  usage: 'segments archive FIRST_INDEX [--throttle P] [--json] | segments archive --due [--json]',
  summary:
    'Archives a sealed segment (docs/storage.md#archive): its rows go to the archive store (ORDINAL_ARCHIVE_DIR) as checked files and its table is dropped; readers go on reading it from the files. --due archives every segment the schedule would (sealed, older than ORDINAL_ARCHIVE_AFTER_MS). Needs an admin token.',
  details: [
    'Flags:',
    '  --due          every segment that is due, oldest first, instead of one',
    "  --throttle P   the share of its time the archive works, 1-100 (default: the server's ORDINAL_ARCHIVE_THROTTLE_PERCENT)",
    '  --json         the segment(s) as JSON',
  ].join('\n'),
  options: { due: { type: 'boolean' }, throttle: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals, term, client }) {
    if (values.due) {
      const { body } = await client().request<{ archived: SegmentBody[] }>(
        'POST',
        '/api/admin/segments/archive-due',
      );
      if (values.json) return void term.out(JSON.stringify(body) + '\n');
      if (body.archived.length === 0) return void term.out('No segment is due\n');
      for (const s of body.archived) term.out(`Archived ${segmentLine(s)}\n`);
      return;
    }
    const first = firstIndexOf('archive', positionals);
    const throttle =
      typeof values.throttle === 'string'
        ? `?throttlePercent=${index('--throttle', values.throttle, 1)}`
        : '';
    const { body } = await client().request<SegmentBody>(
      'POST',
      `/api/admin/segments/${first}/archive${throttle}`,
    );
    if (values.json) return void term.out(JSON.stringify(body) + '\n');
    term.out(`Archived ${segmentLine(body)}\n`);
  },
};

export const segmentsRestoreCommand: Command = {
  name: 'segments restore',
  usage: 'segments restore FIRST_INDEX [--json]',
  summary:
    'Restores an archived segment (docs/storage.md#archive): its files are checked, loaded into a table and attached again; the files stay in the archive store. Needs an admin token.',
  options: { json: { type: 'boolean' } },
  async run({ values, positionals, term, client }) {
    const first = firstIndexOf('restore', positionals);
    const { body } = await client().request<SegmentBody>(
      'POST',
      `/api/admin/segments/${first}/restore`,
    );
    if (values.json) return void term.out(JSON.stringify(body) + '\n');
    term.out(`Restored ${segmentLine(body)}\n`);
  },
};

export const segmentsVerifyCommand: Command = {
  name: 'segments verify',
  usage: 'segments verify FIRST_INDEX [--json]',
  summary:
    "Reads an archived segment's files back and checks them against its manifest's checksums (docs/storage.md#archive). Exits 6 when a file is missing or corrupt, naming it. Needs an admin token.",
  options: { json: { type: 'boolean' } },
  async run({ values, positionals, term, client }) {
    const first = firstIndexOf('verify', positionals);
    const { body } = await client().request<SegmentVerificationBody>(
      'POST',
      `/api/admin/segments/${first}/verify`,
    );
    if (values.json) term.out(JSON.stringify(body) + '\n');
    else
      term.out(
        body.ok
          ? `Segment ${body.firstIndex}: ${body.chunks.length} files, ${body.rows} rows, every checksum matches\n`
          : body.chunks
              .filter((c) => !c.ok)
              .map((c) => `${c.file}: ${c.error}\n`)
              .join(''),
      );
    if (!body.ok)
      throw new CliError(
        `Segment ${body.firstIndex}'s archive failed its check: put the files named back from a backup of the archive store`,
        6,
      );
  },
};
