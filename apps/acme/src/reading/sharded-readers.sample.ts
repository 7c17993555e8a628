/**
 * Sample: three sharded readers (docs/reading.md). Each reads only its users' messages; no
 * coordinator: the shard is a pure function of the userId, the same on server and client.
 *
 *   SHARD_COUNT=3 END_INDEX=300 node apps/acme/dist/reading/sharded-readers.sample.js
 *
 * With END_INDEX it replays up to that index and prints what each shard saw: every message
 * once in all, every customer in exactly one shard.
 */
import { OrdinalClient, memoryBookmark, shardOf } from '@ordinal/client';

const client = new OrdinalClient({
  baseUrl: process.env.ORDINAL_URL ?? 'http://localhost:8083',
  token: process.env.ORDINAL_TOKEN ?? 'dev-ordinal-token',
});
const count = Number(process.env.SHARD_COUNT ?? 3);
const endIndex = process.env.END_INDEX ? Number(process.env.END_INDEX) : await client.head();
console.log(`reading indices 1..${endIndex} with ${count} shard readers`);

const seen = Array.from({ length: count }, () => new Map<string, number>());
const totals = Array.from({ length: count }, () => 0);
await Promise.all(
  Array.from(
    { length: count },
    (_, index) =>
      client.consume({
        // A real reader keeps its own durable bookmark (file or database row) per shard.
        bookmark: memoryBookmark(),
        shard: { count, index },
        endIndex,
        handler: (message) => {
          if (shardOf(message.userId, count) !== index)
            throw new Error(`#${message.id} is not in shard ${index}`);
          const user = message.userId ?? '';
          seen[index].set(user, (seen[index].get(user) ?? 0) + 1);
          totals[index]++;
        },
      }).done,
  ),
);
seen.forEach((users, index) =>
  console.log(`shard ${index}: ${totals[index]} messages from ${users.size} users`),
);
console.log(`total ${totals.reduce((a, b) => a + b, 0)} messages`);
