import type { Command } from '../command.js';
import { UsageError } from '../cli-error.js';
import { table } from '../format.js';
import type { ProjectionBody, RetiredBody } from '../server-bodies.js';
import { index } from './args.js';

/** The builds of a projection as a table. */
function versionsTable(body: ProjectionBody): string {
  return table(
    ['VERSION', 'BUILD', 'STATE', 'POSITION', 'LAG', 'RUNNING'],
    (body.versions ?? []).map((v) => [
      v.version,
      v.build,
      v.state,
      v.position,
      v.lag,
      v.running ? 'yes' : 'no',
    ]),
  );
}

function nameAndVersion(command: string, positionals: string[]): [string, number] {
  const [name, version, ...extra] = positionals;
  if (!name || !version || extra.length > 0)
    throw new UsageError(`${command} needs a projection name and a version, e.g. orders 2`);
  return [name, index('version', version, 1)];
}

export const projectionsPromoteCommand: Command = {
  name: 'projections promote',
  usage: 'projections promote <name> <version>',
  summary:
    'Makes a projection version (its candidate build) serve reads, in one transaction; the serving one becomes previous. Needs an admin token.',
  async run({ positionals, term, client }) {
    const [name, version] = nameAndVersion('projections promote', positionals);
    const { body } = await client().request<ProjectionBody>(
      'POST',
      `/api/projections/${encodeURIComponent(name)}/versions/${version}/promote`,
    );
    term.out(`Promoted ${name} v${version}: it serves reads at position ${body.servingPosition}\n`);
    term.out(versionsTable(body));
  },
};

export const projectionsRollbackCommand: Command = {
  name: 'projections rollback',
  usage: 'projections rollback <name>',
  summary:
    'Points readers back at the previous version of a projection while its tables are kept. Needs an admin token.',
  async run({ positionals, term, client }) {
    const [name, ...extra] = positionals;
    if (!name || extra.length > 0)
      throw new UsageError('projections rollback needs one projection name');
    const { body } = await client().request<ProjectionBody>(
      'POST',
      `/api/projections/${encodeURIComponent(name)}/rollback`,
    );
    term.out(`Rolled ${name} back: v${body.servingVersion} serves reads\n`);
    term.out(versionsTable(body));
  },
};

export const projectionsRetireCommand: Command = {
  name: 'projections retire',
  usage: 'projections retire <name> <version>',
  summary:
    'Drops the tables of a projection version that no longer serves (its schema), its checkpoints and parked messages. Never done automatically. Needs an admin token.',
  async run({ positionals, term, client }) {
    const [name, version] = nameAndVersion('projections retire', positionals);
    const { body } = await client().request<RetiredBody>(
      'POST',
      `/api/projections/${encodeURIComponent(name)}/versions/${version}/retire`,
    );
    term.out(`Retired ${name} v${version}: dropped ${body.dropped.join(', ')}\n`);
  },
};
