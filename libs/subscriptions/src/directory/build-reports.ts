import { toPosition } from '@ordinal/pg';
import type { DirectoryRow } from '../sql/index.js';
import type { SubscriptionStatus } from '../subscription-context.js';
import type {
  ConsumerOwner,
  ConsumerProcess,
  OwnerOnlyField,
  PartitionReport,
  SubscriptionReport,
} from './consumer-report.js';

/** What this process knows of one of its own subscriptions. */
export interface LocalView {
  status: SubscriptionStatus;
  /** This process holds its lease now. */
  ownedHere: boolean;
}

const SEVERITY: Record<string, number> = {
  failed: 5,
  stopped: 4,
  unowned: 3,
  stale: 3,
  rebuilding: 2,
  starting: 1,
  standby: 1,
  running: 0,
};

function ownerOf(row: DirectoryRow, self: string): ConsumerOwner | null {
  if (!row.owner || !row.owner_live) return null;
  return {
    id: row.owner,
    pid: row.pid,
    host: row.host,
    heartbeatAgeMs: row.heartbeat_age_ms === null ? null : Math.round(row.heartbeat_age_ms),
    self: row.owner === self,
    stale: row.owner_stale,
    leaseExpiresInMs:
      row.lease_expires_in_ms === null ? null : Math.max(0, Math.round(row.lease_expires_in_ms)),
  };
}

function standbysOf(row: DirectoryRow, self: string): ConsumerProcess[] {
  return (row.standbys ?? []).map((s) => ({
    id: s.id,
    pid: s.pid,
    host: s.host,
    heartbeatAgeMs: s.heartbeatAgeMs,
    self: s.id === self,
  }));
}

/** A consumer another process runs (or nobody does): only what the database says of it. */
function remoteStatus(
  row: DirectoryRow,
  owner: ConsumerOwner | null,
  local: LocalView | undefined,
): Omit<
  SubscriptionReport,
  'head' | 'lag' | 'parked' | 'owner' | 'standbys' | 'progressAgeMs' | 'local'
> {
  const state: SubscriptionReport['state'] = !owner
    ? 'unowned'
    : owner.stale
      ? 'stale'
      : ((row.state ?? 'running') as SubscriptionStatus['state']);
  return {
    name: row.name,
    kind: row.kind === 'projection' ? 'projection' : 'subscription',
    stream: row.stream ?? local?.status.stream ?? '',
    position: toPosition(row.position),
    liveFrom: toPosition(row.live_from),
    state,
    lastError: row.last_error,
    watermarked: local?.status.watermarked ?? false,
  };
}

function fromRow(
  row: DirectoryRow,
  local: LocalView | undefined,
  head: number,
  self: string,
): SubscriptionReport {
  const owner = ownerOf(row, self);
  const base = local?.ownedHere ? local.status : remoteStatus(row, owner, local);
  return {
    ...base,
    head,
    lag: Math.max(0, head - base.position),
    parked: row.parked,
    owner,
    standbys: standbysOf(row, self),
    progressAgeMs: row.progress_age_ms === null ? null : Math.round(row.progress_age_ms),
    local: local !== undefined,
  };
}

/**
 * Every consumer in the directory (plus local ones not registered yet), one entry per group:
 * a partitioned projection's partitions are folded into one entry with `partitions`.
 */
export function buildReports(
  rows: DirectoryRow[],
  locals: Map<string, LocalView>,
  head: number,
  self: string,
): SubscriptionReport[] {
  const groups = new Map<string, SubscriptionReport[]>();
  const seen = new Set<string>();
  for (const row of rows) {
    seen.add(row.name);
    const list = groups.get(row.group_name) ?? [];
    list.push(fromRow(row, locals.get(row.name), head, self));
    groups.set(row.group_name, list);
  }
  for (const [name, local] of locals) {
    if (seen.has(name)) continue;
    const status = local.status;
    groups.set(name, [
      {
        ...status,
        head,
        lag: Math.max(0, head - status.position),
        parked: 0,
        owner: null,
        standbys: [],
        progressAgeMs: null,
        local: true,
      },
    ]);
  }
  const reports: SubscriptionReport[] = [];
  for (const [group, list] of groups) {
    if (list.length === 1 && list[0].name === group) {
      reports.push(list[0]);
      continue;
    }
    const partitions: PartitionReport[] = list.map((p) => ({
      name: p.name,
      position: p.position,
      lag: p.lag,
      state: p.state,
      lastError: p.lastError,
      parked: p.parked,
      owner: p.owner,
      standbys: p.standbys,
    }));
    // The group's standbys: processes that registered it but own none of its partitions.
    const owners = new Set(list.flatMap((p) => (p.owner ? [p.owner.id] : [])));
    const standbys = new Map<string, ConsumerProcess>();
    for (const p of list) for (const s of p.standbys) if (!owners.has(s.id)) standbys.set(s.id, s);
    const worst = list.reduce((a, b) =>
      (SEVERITY[b.state] ?? 0) > (SEVERITY[a.state] ?? 0) ? b : a,
    );
    const slowest = list.reduce((a, b) => (b.position < a.position ? b : a));
    const entry: SubscriptionReport = {
      ...slowest,
      name: group,
      state: worst.state,
      lastError: list.find((p) => p.lastError)?.lastError ?? null,
      parked: list.reduce((n, p) => n + p.parked, 0),
      lag: Math.max(...list.map((p) => p.lag)),
      owner: null,
      standbys: [...standbys.values()],
      local: list.some((p) => p.local),
      partitions,
    };
    ownerOnlyOfGroup(entry, list);
    reports.push(entry);
  }
  return reports.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * The owner-only fields of a partitioned projection's entry: known when this process runs
 * every partition (retries and skips summed), left out otherwise.
 */
function ownerOnlyOfGroup(entry: SubscriptionReport, list: SubscriptionReport[]): void {
  const fields: OwnerOnlyField[] = [
    'lastErrorAt',
    'retries',
    'pendingLate',
    'lateDelivered',
    'skipped',
    'parkedHere',
  ];
  if (list.some((p) => p.retries === undefined)) {
    for (const field of fields) delete entry[field];
    return;
  }
  entry.retries = list.reduce((n, p) => n + (p.retries ?? 0), 0);
  entry.skipped = list.reduce((n, p) => n + (p.skipped ?? 0), 0);
  entry.parkedHere = list.reduce((n, p) => n + (p.parkedHere ?? 0), 0);
  entry.lateDelivered = list.reduce((n, p) => n + (p.lateDelivered ?? 0), 0);
  entry.pendingLate = list.flatMap((p) => p.pendingLate ?? []).sort((a, b) => a - b);
}
