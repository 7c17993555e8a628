import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { resolveGroupDefinition, type ConsumerGroupDeclaration } from '@ordinal/subscriptions';

/**
 * The consumer groups of the JSON or YAML file named by ORDINAL_CONSUMER_GROUPS:
 * `{consumerGroups: [{name, source, strategy, …}]}` (or the list alone), each as
 * `PUT /api/consumer-groups/:group` takes it. Checked at start: a bad entry stops the start
 * with a message naming it. `error` builds the configuration error to throw.
 */
export function loadGroupsFile(
  path: string,
  error: (message: string) => Error = (message) => new Error(message),
): ConsumerGroupDeclaration[] {
  let raw: unknown;
  try {
    const text = readFileSync(path, 'utf8');
    raw = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (cause) {
    throw error(`ORDINAL_CONSUMER_GROUPS: cannot read ${path}: ${(cause as Error).message}`);
  }
  const list = Array.isArray(raw)
    ? raw
    : ((raw as { consumerGroups?: unknown } | null)?.consumerGroups ?? []);
  if (!Array.isArray(list))
    throw error(`ORDINAL_CONSUMER_GROUPS: ${path} must be {"consumerGroups": [...]}`);
  const seen = new Set<string>();
  return list.map((entry: unknown, i) => {
    const where = `ORDINAL_CONSUMER_GROUPS: ${path}: consumerGroups[${i}]`;
    const e = entry as ConsumerGroupDeclaration | null;
    if (!e || typeof e !== 'object' || typeof e.name !== 'string')
      throw error(`${where} must be an object with a name`);
    if (seen.has(e.name)) throw error(`${where}.name '${e.name}' is used twice`);
    seen.add(e.name);
    const { name: _name, ...definition } = e;
    try {
      resolveGroupDefinition(definition);
    } catch (cause) {
      throw error(`${where} ('${e.name}'): ${(cause as Error).message}`);
    }
    return e;
  });
}
