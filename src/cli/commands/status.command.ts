import { nameText } from './projections.command.js';
import type { Command } from '../command.js';
import { table } from '../format.js';
import { ownerText, standbysText } from '../consumer-format.js';
import type {
  InterfacesBody,
  ProjectionsBody,
  ScavengeBody,
  ScavengeRunBody,
} from '../server-bodies.js';

/** Everything a server runs, in one view. */
export async function readStatus(client: ReturnType<Parameters<Command['run']>[0]['client']>) {
  const [head, projections, interfaces, scavenge] = await Promise.all([
    client.head(),
    client.request<ProjectionsBody>('GET', '/api/projections').then((r) => r.body),
    client.request<InterfacesBody>('GET', '/api/interfaces').then((r) => r.body),
    client.request<ScavengeBody>('GET', '/api/admin/scavenge?limit=1').then((r) => r.body),
  ]);
  return {
    head,
    watermark: projections.watermark,
    projections: projections.projections,
    amqp: { on: interfaces.amqp, broker: interfaces.broker },
    interfaces: interfaces.interfaces,
    scavenge: { running: scavenge.running, last: scavenge.runs[0] ?? null },
  };
}

/** One line on the scavenge: the run going on here, else the newest run. */
function scavengeText(scavenge: { running: ScavengeRunBody | null; last: ScavengeRunBody | null }) {
  const run = scavenge.running ?? scavenge.last;
  if (!run) return 'never run';
  const figures = `${run.rowsErased} rows erased, ${run.bytesFreed} bytes freed`;
  if (run.status === 'running')
    return `run ${run.id} at index ${run.position} of ${run.through} (${figures})${scavenge.running ? '' : ', not running now: run it again to resume'}`;
  return `run ${run.id} ${run.status} ${run.finishedAt ?? ''} (${figures})`;
}

export const statusCommand: Command = {
  name: 'status',
  usage: 'status [--json]',
  summary:
    'The head of the log, every projection and subscription (position, lag, state, owner, the processes standing by) and every push interface (bookmark, lag, state).',
  details: 'Flags:\n  --json         one JSON object (for scripts)',
  options: { json: { type: 'boolean' } },
  async run({ values, term, client, baseUrl }) {
    const status = await readStatus(client());
    if (values.json) {
      term.out(JSON.stringify(status) + '\n');
      return;
    }
    const hole = status.watermark.heldHole;
    const lines = [
      `Server     ${baseUrl}`,
      `Head       ${status.head}   (ordering ${status.watermark.ordering}, safe head ${status.watermark.position})`,
      `Held hole  ${hole ? `${hole.from}..${hole.to} for ${hole.heldMs} ms, ${hole.writers} writer(s)${hole.oldestWriter ? `, oldest pid ${hole.oldestWriter.pid} (${hole.oldestWriter.applicationName || 'no application_name'})` : ''}` : 'none'}`,
      `AMQP       ${status.amqp.on ? `broker ${status.amqp.broker}` : 'off'}`,
      `Scavenge   ${scavengeText(status.scavenge)}`,
      '',
    ];
    term.out(lines.join('\n') + '\n');
    term.out('Projections and subscriptions\n');
    term.out(
      status.projections.length === 0
        ? '  (none)\n'
        : table(
            [
              'NAME',
              'KIND',
              'STREAM',
              'POSITION',
              'LAG',
              'STATE',
              'OWNER',
              'STANDBYS',
              'LAST ERROR',
            ],
            status.projections.map((p) => [
              nameText(p),
              p.kind,
              p.stream,
              p.position,
              p.lag,
              p.state,
              ownerText(p.owner),
              standbysText(p.standbys),
              p.lastError,
            ]),
          ),
    );
    term.out('\nInterfaces\n');
    term.out(
      status.interfaces.length === 0
        ? `  (none${status.amqp.on ? '' : ': AMQP is off'})\n`
        : table(
            ['NAME', 'TYPE', 'BOOKMARK', 'POSITION', 'LAG', 'STATE', 'LAST ERROR'],
            status.interfaces.map((i) => [
              i.name,
              i.type,
              i.bookmark,
              i.position,
              i.lag,
              i.state,
              i.lastError,
            ]),
          ),
    );
  },
};
