import { Counter, type Registry } from 'prom-client';

/**
 * A Prometheus counter that follows a running total kept elsewhere (a library's stats): at
 * each scrape it adds what the total grew by. `read` may return one total per label set;
 * every label set it returns is exported from then on, at 0 when it has not grown, so a
 * series exists before its first event.
 */
export function sourceCounter<L extends string>(options: {
  name: string;
  help: string;
  registry: Registry;
  labelNames?: readonly L[];
  read: () =>
    | number
    | { labels: Record<L, string>; value: number }[]
    | Promise<{ labels: Record<L, string>; value: number }[]>;
}): Counter<L> {
  const last = new Map<string, number>();
  return new Counter<L>({
    name: options.name,
    help: options.help,
    labelNames: options.labelNames ?? [],
    registers: [options.registry],
    async collect() {
      const read = await options.read();
      const totals =
        typeof read === 'number' ? [{ labels: {} as Record<L, string>, value: read }] : read;
      for (const { labels, value } of totals) {
        const key = JSON.stringify(labels);
        const before = last.get(key) ?? 0;
        // A source that restarted from 0 (a new run) starts a new climb; the counter never goes down.
        const delta = value >= before ? value - before : value;
        this.inc(labels, delta);
        last.set(key, value);
      }
    },
  });
}
