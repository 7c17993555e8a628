import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

/** Every TypeScript source of the server, specs left out. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.ts$/.test(entry.name) && !/spec\.ts$/.test(entry.name) ? [path] : [];
  });
}

describe('the server is wiring on the libraries’ public doors', () => {
  it('imports no `@ordinal/*/internal` module', () => {
    const offenders = sources(here).filter((file) =>
      /from '@ordinal\/[a-z-]+\/internal'/.test(readFileSync(file, 'utf8')),
    );
    expect(offenders.map((f) => relative(here, f))).toEqual([]);
  });
});
