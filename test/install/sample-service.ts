import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The sample service of the guides: every ```ts block whose first line is a `// src/<path>`
 * comment, as { path, text }. The install test compiles exactly these.
 */
export function guideFiles(...guidePaths: string[]): { path: string; text: string }[] {
  const files: { path: string; text: string }[] = [];
  for (const guidePath of guidePaths) {
    const guide = readFileSync(guidePath, 'utf8');
    for (const match of guide.matchAll(/```ts\n\/\/ (src\/[^\n]+\.ts)\n([\s\S]*?)```/g)) {
      if (files.some((f) => f.path === match[1]))
        throw new Error(`${match[1]} is in the guides twice`);
      files.push({ path: match[1], text: match[2] });
    }
  }
  return files;
}

/** Writes `files` under `root` (creating folders). */
export function writeFiles(root: string, files: { path: string; text: string }[]): void {
  for (const file of files) {
    const target = join(root, file.path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, file.text);
  }
}

/** The guide's tsconfig.json block, with `include` (and `types`, so no stray @types apply). */
export function guideTsconfig(guidePath: string): string {
  const guide = readFileSync(guidePath, 'utf8');
  const block = /```json\n(\{\n {2}"compilerOptions"[\s\S]*?)```/.exec(guide);
  if (!block) throw new Error(`${guidePath} has no tsconfig.json block`);
  const tsconfig = JSON.parse(block[1]) as {
    compilerOptions: Record<string, unknown>;
    include?: string[];
  };
  return JSON.stringify(
    {
      ...tsconfig,
      compilerOptions: { ...tsconfig.compilerOptions, types: ['node'] },
      include: ['src'],
    },
    null,
    2,
  );
}
