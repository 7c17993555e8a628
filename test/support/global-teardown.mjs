import { onServer } from './global-setup.mjs';

export default async function globalTeardown() {
  // The migrated template (global-setup.mjs) goes with the run.
  const template = globalThis.__ORDINAL_TEMPLATE__;
  if (template) await onServer(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
  for (const container of globalThis.__ORDINAL_CONTAINERS__ ?? []) await container.stop();
}
