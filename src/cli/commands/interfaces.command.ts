import type { Command } from '../command.js';
import { UsageError } from '../cli-error.js';
import { table } from '../format.js';
import type { InterfacesBody, RewindBody } from '../server-bodies.js';
import { index } from './args.js';

export const interfacesListCommand: Command = {
  name: 'interfaces list',
  usage: 'interfaces list [--json]',
  summary: 'Every push interface: type, bookmark, lag, state.',
  options: { json: { type: 'boolean' } },
  async run({ values, term, client }) {
    const { body } = await client().request<InterfacesBody>('GET', '/api/interfaces');
    if (values.json) return void term.out(JSON.stringify(body) + '\n');
    const rows = body.interfaces.map((i) => [
      i.name,
      i.type,
      i.bookmark,
      i.position,
      i.lag,
      i.state,
      i.lastError,
    ]);
    term.out(
      rows.length === 0
        ? `(no interfaces${body.amqp ? '' : ': AMQP is off'})\n`
        : table(['NAME', 'TYPE', 'BOOKMARK', 'POSITION', 'LAG', 'STATE', 'LAST ERROR'], rows),
    );
  },
};

export const interfacesRewindCommand: Command = {
  name: 'interfaces rewind',
  usage: 'interfaces rewind <name> --to <index>',
  summary:
    "Sets a replayable interface's bookmark to <index>: every message after it is sent to <name>.sink again (with a new serverCorrelationUuid). --to 0 resends the whole log. Needs an admin token.",
  options: { to: { type: 'string' } },
  async run({ values, positionals, term, client }) {
    const [name, ...extra] = positionals;
    if (!name || extra.length > 0)
      throw new UsageError(
        'interfaces rewind needs one interface name; see ordinal interfaces list',
      );
    if (values.to === undefined) throw new UsageError('interfaces rewind needs --to <index>');
    const to = index('--to', values.to as string);
    const { body } = await client().request<RewindBody>(
      'POST',
      `/api/interfaces/${encodeURIComponent(name)}/rewind`,
      { to },
    );
    term.out(
      `Interface ${body.name} rewound: bookmark ${body.bookmark}; messages after it are being sent again\n`,
    );
  },
};
