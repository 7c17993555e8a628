export default async function globalTeardown() {
  for (const container of globalThis.__ORDINAL_CONTAINERS__ ?? []) await container.stop();
}
