import type { Command } from '../command.js';
import { table } from '../format.js';
import type { SegmentsBody } from '../server-bodies.js';

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
        table(['FIRST', 'LAST', 'TIER', 'ROWS (EST.)', 'BYTES', 'TABLE'], rows),
    );
  },
};
