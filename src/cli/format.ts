import type { OrdinalMessage } from '@ordinal/client';

/** Lays rows out in aligned columns under a header (plain text, two spaces apart). */
export function table(
  headers: string[],
  rows: Array<Array<string | number | null | undefined>>,
): string {
  const cells = rows.map((row) =>
    row.map((c) => (c === null || c === undefined || c === '' ? '-' : String(c))),
  );
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]?.length ?? 0)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n') + '\n';
}

/** One message on one line: index, time, type, user, stream, then the body as compact JSON. */
export function messageLine(message: OrdinalMessage): string {
  const time = message.createdAt ? message.createdAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '';
  const parts = [`#${message.id}`, time, message.messageType];
  if (message.userId) parts.push(`user=${message.userId}`);
  if (message.streamId) parts.push(`stream=${message.streamId}@${message.streamVersion}`);
  parts.push(JSON.stringify(message.body));
  return parts.join('  ');
}
