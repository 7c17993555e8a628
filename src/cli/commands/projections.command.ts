import type { Command } from '../command.js';
import { CliError, UsageError } from '../cli-error.js';
import { table } from '../format.js';
import { ownerText, standbysText } from '../consumer-format.js';
import { ProgressBar } from '../progress-bar.js';
import type { ProjectionBody, ProjectionsBody, RebuildBody } from '../server-bodies.js';
import { index } from './args.js';

export const projectionsListCommand: Command = {
  name: 'projections list',
  usage: 'projections list [--json]',
  summary:
    'Every projection and subscription: position, lag, state, owner (the process running it) and standbys.',
  options: { json: { type: 'boolean' } },
  async run({ values, term, client }) {
    const { body } = await client().request<ProjectionsBody>('GET', '/api/projections');
    if (values.json) return void term.out(JSON.stringify(body.projections) + '\n');
    const rows = body.projections.map((p) => [
      nameText(p),
      p.kind,
      p.position,
      p.lag,
      p.state,
      ownerText(p.owner),
      standbysText(p.standbys),
      p.lastError,
    ]);
    term.out(
      rows.length === 0
        ? '(no projections or subscriptions)\n'
        : table(
            ['NAME', 'KIND', 'POSITION', 'LAG', 'STATE', 'OWNER', 'STANDBYS', 'LAST ERROR'],
            rows,
          ),
    );
  },
};

export const projectionsRebuildCommand: Command = {
  name: 'projections rebuild',
  usage: 'projections rebuild <name> [--in-place] [--timeout SECONDS] [--no-wait]',
  summary:
    'Rebuilds a projection blue/green: a fresh build of its serving version replays beside it and replaces it once promoted (readers keep the full model meanwhile); shows progress until it serves. Needs an admin token.',
  details: [
    'Flags:',
    '  --in-place     clear the read model and checkpoint and replay into it (readers see it fill up;',
    '                 for models too large to hold twice); waits until it caught up with the head',
    '  --timeout S    give up waiting after S seconds (default 600; the rebuild goes on on the server)',
    '  --no-wait      start the rebuild and return',
  ].join('\n'),
  options: {
    timeout: { type: 'string' },
    'no-wait': { type: 'boolean' },
    'in-place': { type: 'boolean' },
  },
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
    const inPlace = values['in-place'] === true;
    const { body: started } = await client.request<RebuildBody>(
      'POST',
      `${path}/rebuild${inPlace ? '?mode=in-place' : ''}`,
    );
    // What was asked decides what to follow: an in-place rebuild resets the serving build, and a
    // candidate listed beside it (an earlier blue/green rebuild) is not this one.
    const candidate = inPlace ? undefined : started.versions?.find((v) => v.state === 'candidate');
    const target = started.head;
    term.err(
      candidate
        ? `Rebuilding ${name} blue/green: v${candidate.version} build ${candidate.build} replays beside the serving one\n`
        : `Rebuilding ${name} up to index ${target}\n`,
    );
    if (values['no-wait']) return;
    const bar = new ProgressBar(term, name, target);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // The server waits (up to 2 s) for the projection to reach the target, so this polls without sleeping.
      const { body } = await client.request<ProjectionBody>(
        'GET',
        candidate ? path : `${path}?atLeast=${target}&timeoutMs=2000`,
      );
      const build = candidate
        ? body.versions?.find((v) => v.version === candidate.version && v.build === candidate.build)
        : undefined;
      const position = build ? build.position : body.position;
      bar.update(Math.min(position, target), body.state === 'failed' ? '(failed)' : '');
      if (body.state === 'failed') {
        bar.done();
        throw new CliError(
          `Projection ${name} failed during the rebuild at ${position}: ${body.lastError} (it retries with back-off; see ordinal status)`,
        );
      }
      if (candidate && (!build || build.state !== 'candidate')) {
        bar.done();
        if (build?.state !== 'serving')
          throw new CliError(
            `Projection ${name}: the new build is ${build?.state ?? 'gone'}, not serving (see ordinal status)`,
          );
        break;
      }
      if (!candidate && body.position >= target && body.state !== 'rebuilding') break;
      if (Date.now() > deadline) {
        bar.done();
        throw new CliError(
          `Projection ${name} had not ${candidate ? 'been promoted' : 'caught up'} after ${timeoutMs / 1000} s (at ${position} of ${target}); the rebuild goes on on the server`,
        );
      }
      // Blue/green: nothing to wait on server-side, so a short pause between two looks.
      if (candidate) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    bar.done();
    term.out(
      candidate
        ? `Rebuilt ${name}: the new build serves reads (the old one is kept as previous; ordinal projections retire removes it)\n`
        : `Rebuilt ${name}: caught up at ${target}\n`,
    );
  },
};

/**
 * `name`, or `name [v2 candidate]` for a build of a versioned projection. A projection's first
 * build serving (what every projection without versions is) shows its name alone.
 */
export function nameText(p: ProjectionBody): string {
  const plain =
    !p.versionState ||
    (p.versionState === 'serving' && (p.version ?? 1) === 1 && (p.build ?? 1) <= 1);
  return plain
    ? p.name
    : `${p.name} [v${p.version}${p.build && p.build > 1 ? ` build ${p.build}` : ''} ${p.versionState}]`;
}
