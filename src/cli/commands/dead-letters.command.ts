import type { Command } from '../command.js';
import { table } from '../format.js';
import type { DeadLettersBody, RedriveBody } from '../server-bodies.js';
import { index } from './args.js';

export const deadLettersListCommand: Command = {
  name: 'dead-letters list',
  usage: 'dead-letters list [--limit N] [--json]',
  summary:
    "The AMQP input's rejected messages (eventstore.input.rejected): how many, and the first N (they stay in the queue). Needs an admin token.",
  details: [
    'Flags:',
    '  --limit N      show at most N (default 20, at most 1000)',
    '  --json         one JSON object',
  ].join('\n'),
  options: { limit: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, term, client }) {
    const limit = values.limit === undefined ? 20 : index('--limit', values.limit as string);
    const { body } = await client().request<DeadLettersBody>(
      'GET',
      `/api/dead-letters?limit=${limit}`,
    );
    if (values.json) return void term.out(JSON.stringify(body) + '\n');
    term.out(`${body.count} dead letter(s) in ${body.queue}\n`);
    const rows = body.messages.map((m) => [
      m.messageType,
      m.userId,
      m.death?.reason,
      m.death?.time,
      m.body.length > 60 ? m.body.slice(0, 60) + '…' : m.body,
    ]);
    if (rows.length > 0)
      term.out(table(['MESSAGE TYPE', 'USER', 'REASON', 'DEAD SINCE', 'BODY'], rows));
  },
};

export const deadLettersRedriveCommand: Command = {
  name: 'dead-letters redrive',
  usage: 'dead-letters redrive',
  summary:
    "Moves every message now in the input's rejected queue back to the input queue (confirmed publish, then removed) and prints how many. A message still malformed is rejected again. Needs an admin token.",
  async run({ term, client }) {
    const { body } = await client().request<RedriveBody>('POST', '/api/dead-letters/redrive');
    term.out(`Redrove ${body.moved} message(s) from ${body.from} to ${body.to}\n`);
  },
};
