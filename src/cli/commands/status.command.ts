import type { Command } from '../command.js';
import { table } from '../format.js';
import type { InterfacesBody, ProjectionsBody } from '../server-bodies.js';

/** Everything a server runs, in one view. */
export async function readStatus(client: ReturnType<Parameters<Command['run']>[0]['client']>) {
  const [head, projections, interfaces] = await Promise.all([
    client.head(),
    client.request<ProjectionsBody>('GET', '/api/projections').then((r) => r.body),
    client.request<InterfacesBody>('GET', '/api/interfaces').then((r) => r.body),
  ]);
  return {
    head,
    watermark: projections.watermark,
    projections: projections.projections,
    amqp: { on: interfaces.amqp, broker: interfaces.broker },
    interfaces: interfaces.interfaces,
  };
}

export const statusCommand: Command = {
  name: 'status',
  usage: 'status [--json]',
  summary:
    'The head of the log, every projection and subscription (position, lag, state, owner) and every push interface (bookmark, lag, state).',
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
      '',
    ];
    term.out(lines.join('\n') + '\n');
    term.out('Projections and subscriptions\n');
    term.out(
      status.projections.length === 0
        ? '  (none)\n'
        : table(
            ['NAME', 'KIND', 'STREAM', 'POSITION', 'LAG', 'STATE', 'OWNER', 'LAST ERROR'],
            status.projections.map((p) => [
              p.name,
              p.kind,
              p.stream,
              p.position,
              p.lag,
              p.state,
              ownerText(p.owner),
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

/** A consumer's owner as `pid@host (heartbeat age)`, or null when no process owns it. */
function ownerText(owner: unknown): string | null {
  if (owner === null || owner === undefined) return null;
  if (typeof owner !== 'object') return `${owner as string | number | boolean}`; // a JSON primitive
  const o = owner as {
    id?: string;
    pid?: number | null;
    host?: string | null;
    heartbeatAgeMs?: number | null;
    self?: boolean;
  };
  const who = o.pid !== null && o.pid !== undefined ? `${o.pid}@${o.host ?? '?'}` : (o.id ?? '?');
  return o.heartbeatAgeMs !== null && o.heartbeatAgeMs !== undefined
    ? `${who} (${Math.round(o.heartbeatAgeMs)} ms ago)`
    : who;
}
