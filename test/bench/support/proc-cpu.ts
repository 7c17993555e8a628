import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import type pg from 'pg';

const TICK_US = 1e6 / 100; // USER_HZ

/** CPU (user + system) a process has used so far, in µs; 0 once it is gone. */
export function cpuUs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return 0;
  }
}

/** The PostgreSQL backends serving one database, as `admin` (any connection to the cluster) sees them. */
export async function backendsOf(admin: pg.Client, database: string): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = $1',
    [database],
  );
  return rows.map((r) => r.pid);
}

/** The whole machine's CPU time so far (all cores), busy and in all, in ticks (/proc/stat). */
function machineTicks(): { busy: number; total: number } {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

/** What a measured interval cost: µs of CPU of each group of processes, and how busy the machine was. */
export interface CpuSpent {
  /** µs of CPU per group (processes gone before the end count up to their last reading). */
  us: Record<string, number>;
  /** The machine's busy share of all its cores over the interval (0–1). */
  machineBusy: number;
  /** Cores the machine has. */
  cores: number;
}

/**
 * Measures the CPU an interval costs: `groups` name sets of processes (pids, or a function
 * giving them at the start and at the end, such as a database's backends, which come and go);
 * this process itself is the group `self`. Read from /proc, which other work on a shared
 * machine disturbs far less than throughput.
 */
export async function cpuMeter(
  groups: Record<string, () => Promise<number[]> | number[]>,
): Promise<{ stop(): Promise<CpuSpent> }> {
  const start = new Map<string, Map<number, number>>();
  for (const [name, pids] of Object.entries(groups))
    start.set(name, new Map((await pids()).map((pid) => [pid, cpuUs(pid)])));
  const self0 = process.cpuUsage();
  const machine0 = machineTicks();
  return {
    async stop() {
      const machine1 = machineTicks();
      const self = process.cpuUsage(self0);
      const us: Record<string, number> = { self: self.user + self.system };
      for (const [name, pids] of Object.entries(groups)) {
        const before = start.get(name)!;
        const now = new Set(await pids());
        let total = 0;
        // Those still there: their growth; those that started during the interval: all of it.
        for (const pid of now) total += cpuUs(pid) - (before.get(pid) ?? 0);
        us[name] = total;
      }
      const total = machine1.total - machine0.total;
      return {
        us,
        machineBusy: total > 0 ? (machine1.busy - machine0.busy) / total : 0,
        cores: cpus().length,
      };
    },
  };
}
