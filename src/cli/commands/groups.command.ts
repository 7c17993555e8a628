import type { Command } from '../command.js';
import { UsageError } from '../cli-error.js';
import { table } from '../format.js';
import { index, json } from './args.js';

/** A consumer group as `GET /api/consumer-groups/:group` answers (what the commands show). */
interface GroupBody {
  group: string;
  state: string;
  checkpoint: number;
  lag: number;
  inFlight: number;
  ready: number;
  parked: number;
  definition: { strategy: string; source: Record<string, unknown> };
  members: Array<{
    memberId: string;
    epoch: number;
    alive: boolean;
    inFlight: number;
    server: string;
    lastSeenAt: string;
  }>;
}

const groupPath = (name: string) => `/api/consumer-groups/${encodeURIComponent(name)}`;

function oneName(command: string, positionals: string[]): string {
  const [name, ...extra] = positionals;
  if (!name || extra.length > 0)
    throw new UsageError(`${command} needs one consumer group name; see ordinal groups status`);
  return name;
}

export const groupsStatusCommand: Command = {
  name: 'groups status',
  usage: 'groups status [<group>] [--json]',
  summary:
    'Consumer groups: state, checkpoint, lag, in flight, parked; with a name, its members too.',
  options: { json: { type: 'boolean' } },
  async run({ values, positionals, term, client }) {
    if (positionals.length > 1) throw new UsageError('groups status takes at most one group name');
    const [name] = positionals;
    const groups = name
      ? [(await client().request<GroupBody>('GET', groupPath(name))).body]
      : (await client().request<{ groups: GroupBody[] }>('GET', '/api/consumer-groups')).body
          .groups;
    if (values.json) return void term.out(JSON.stringify(name ? groups[0] : groups) + '\n');
    if (groups.length === 0) return void term.out('(no consumer groups)\n');
    term.out(
      table(
        [
          'GROUP',
          'STRATEGY',
          'STATE',
          'MEMBERS',
          'CHECKPOINT',
          'LAG',
          'IN FLIGHT',
          'READY',
          'PARKED',
        ],
        groups.map((g) => [
          g.group,
          g.definition.strategy,
          g.state,
          g.members.filter((m) => m.alive).length,
          g.checkpoint,
          g.lag,
          g.inFlight,
          g.ready,
          g.parked,
        ]),
      ),
    );
    if (!name) return;
    const members = groups[0].members;
    term.out(
      members.length === 0
        ? '(no members)\n'
        : '\n' +
            table(
              ['MEMBER', 'EPOCH', 'ALIVE', 'IN FLIGHT', 'SERVER', 'LAST SEEN'],
              members.map((m) => [
                m.memberId,
                m.epoch,
                m.alive ? 'yes' : 'no',
                m.inFlight,
                m.server,
                m.lastSeenAt,
              ]),
            ),
    );
  },
};

export const groupsDefineCommand: Command = {
  name: 'groups define',
  usage: "groups define <group> '<definition JSON>'",
  summary:
    'Creates a consumer group or updates its settings (docs/consumer-groups.md). Needs an admin token.',
  details:
    'Example: ordinal groups define orders \'{"source":{"types":["OrderPlaced"]},"strategy":"pinned_by_stream"}\'',
  async run({ positionals, term, client }) {
    const [name, definition, ...extra] = positionals;
    if (!name || definition === undefined || extra.length > 0)
      throw new UsageError('groups define needs a group name and its definition as JSON');
    const { status, body } = await client().request<GroupBody>(
      'PUT',
      groupPath(name),
      json('the definition', definition),
    );
    term.out(
      `${status === 201 ? 'Created' : 'Updated'} consumer group ${body.group} (checkpoint ${body.checkpoint})\n`,
    );
  },
};

export const groupsDeleteCommand: Command = {
  name: 'groups delete',
  usage: 'groups delete <group>',
  summary:
    'Deletes a consumer group with its members, deliveries and parked references. Needs an admin token.',
  async run({ positionals, term, client }) {
    const name = oneName('groups delete', positionals);
    await client().request('DELETE', groupPath(name));
    term.out(`Deleted consumer group ${name}\n`);
  },
};

export const groupsParkedCommand: Command = {
  name: 'groups parked',
  usage: 'groups parked <group> [--replay [--limit N]] [--json]',
  summary:
    "A consumer group's parked events (index, reason, attempts); --replay puts them back to be delivered again (admin token).",
  options: { replay: { type: 'boolean' }, limit: { type: 'string' }, json: { type: 'boolean' } },
  async run({ values, positionals, term, client }) {
    const name = oneName('groups parked', positionals);
    const limit = values.limit === undefined ? 100 : index('--limit', values.limit as string, 1);
    if (values.replay) {
      const { body } = await client().request<{ replayed: number[]; checkpoint: number }>(
        'POST',
        `${groupPath(name)}/parked/replay`,
        { limit },
      );
      return void term.out(
        values.json
          ? JSON.stringify(body) + '\n'
          : `Replayed ${body.replayed.length} parked events of ${name} (checkpoint stays ${body.checkpoint})\n`,
      );
    }
    const { body } = await client().request<{
      parked: Array<{ index: number; reason: string; attempts: number; parkedAt: string }>;
    }>('GET', `${groupPath(name)}/parked?limit=${limit}`);
    if (values.json) return void term.out(JSON.stringify(body.parked) + '\n');
    term.out(
      body.parked.length === 0
        ? '(no parked events)\n'
        : table(
            ['INDEX', 'ATTEMPTS', 'PARKED AT', 'REASON'],
            body.parked.map((p) => [p.index, p.attempts, p.parkedAt, p.reason]),
          ),
    );
  },
};
