/** A process as the server reports it beside a consumer (owner or standby). */
interface ProcessBody {
  id?: string;
  pid?: number | null;
  host?: string | null;
  heartbeatAgeMs?: number | null;
  stale?: boolean;
}

function isProcess(value: unknown): value is ProcessBody {
  return typeof value === 'object' && value !== null;
}

/** `pid@host`, or the process's id when the pid is unknown. */
function who(p: ProcessBody): string {
  return p.pid !== null && p.pid !== undefined ? `${p.pid}@${p.host ?? '?'}` : (p.id ?? '?');
}

/**
 * A consumer's owner as `pid@host (heartbeat age)`, with `, overdue` when its heartbeat is late
 * (it may be dead); null when no process owns it.
 */
export function ownerText(owner: unknown): string | null {
  if (owner === null || owner === undefined) return null;
  if (!isProcess(owner)) return `${owner as string | number | boolean}`; // a JSON primitive
  const age =
    owner.heartbeatAgeMs !== null && owner.heartbeatAgeMs !== undefined
      ? ` (${Math.round(owner.heartbeatAgeMs)} ms ago${owner.stale ? ', overdue' : ''})`
      : '';
  return who(owner) + age;
}

/** The processes standing by for a consumer, `pid@host` each, comma-separated; null for none. */
export function standbysText(standbys: unknown): string | null {
  if (!Array.isArray(standbys) || standbys.length === 0) return null;
  return standbys.map((s) => (isProcess(s) ? who(s) : String(s))).join(', ');
}
