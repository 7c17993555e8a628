import type { Command } from '../command.js';
import { CliError, UsageError } from '../cli-error.js';
import { table } from '../format.js';
import { ProgressBar } from '../progress-bar.js';
import type { ProjectionBody, ProjectionsBody, RebuildBody } from '../server-bodies.js';
import { index } from './args.js';

export const projectionsListCommand: Command = {
  name: 'projections list',
  usage: 'projections list [--json]',
  summary: 'Every projection and subscription: position, lag, state.',
  options: { json: { type: 'boolean' } },
  async run({ values, term, client }) {
    const { body } = await client().request<ProjectionsBody>('GET', '/api/projections');
    if (values.json) return void term.out(JSON.stringify(body.projections) + '\n');
    const rows = body.projections.map((p) => [
      p.name,
      p.kind,
      p.position,
      p.lag,
      p.state,
      p.lastError,
    ]);
    term.out(
      rows.length === 0
        ? '(no projections or subscriptions)\n'
        : table(['NAME', 'KIND', 'POSITION', 'LAG', 'STATE', 'LAST ERROR'], rows),
    );
  },
};

export const projectionsRebuildCommand: Command = {
  name: 'projections rebuild',
  usage: 'projections rebuild <name> [--timeout SECONDS] [--no-wait]',
  summary:
    "Clears a projection's read model and checkpoint and replays the log into it, showing progress until it has caught up with the head at the time of the rebuild. Needs an admin token.",
  details: [
    'Flags:',
    '  --timeout S    give up waiting after S seconds (default 600; the rebuild goes on on the server)',
    '  --no-wait      start the rebuild and return',
  ].join('\n'),
  options: { timeout: { type: 'string' }, 'no-wait': { type: 'boolean' } },
  async run({ values, positionals, term, client: clientOf }) {
    const [name, ...extra] = positionals;
    if (!name || extra.length > 0)
      throw new UsageError(
        'projections rebuild needs one projection name; see ordinal projections list',
      );
    const timeoutMs =
      (values.timeout === undefined ? 600 : index('--timeout', values.timeout as string, 1)) * 1000;
    const client = clientOf();
    const path = `/api/projections/${encodeURIComponent(name)}`;
    const { body: started } = await client.request<RebuildBody>('POST', `${path}/rebuild`);
    const target = started.head;
    term.err(`Rebuilding ${name} up to index ${target}\n`);
    if (values['no-wait']) return;
    const bar = new ProgressBar(term, name, target);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // The server waits (up to 2 s) for the projection to reach the target, so this polls without sleeping.
      const { body } = await client.request<ProjectionBody>(
        'GET',
        `${path}?atLeast=${target}&timeoutMs=2000`,
      );
      bar.update(Math.min(body.position, target), body.state === 'failed' ? '(failed)' : '');
      if (body.state === 'failed') {
        bar.done();
        throw new CliError(
          `Projection ${name} failed during the rebuild at ${body.position}: ${body.lastError} (it retries with back-off; see ordinal status)`,
        );
      }
      if (body.position >= target && body.state !== 'rebuilding') break;
      if (Date.now() > deadline) {
        bar.done();
        throw new CliError(
          `Projection ${name} had not caught up after ${timeoutMs / 1000} s (at ${body.position} of ${target}); the rebuild goes on on the server`,
        );
      }
    }
    bar.done();
    term.out(`Rebuilt ${name}: caught up at ${target}\n`);
  },
};
