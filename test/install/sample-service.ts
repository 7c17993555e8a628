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

/** The guide's tsconfig.json block, as written (the install test adds nothing to it). */
export function guideTsconfig(guidePath: string): string {
  const guide = readFileSync(guidePath, 'utf8');
  const block = /```json\n(\{\n {2}"compilerOptions"[\s\S]*?)```/.exec(guide);
  if (!block) throw new Error(`${guidePath} has no tsconfig.json block`);
  return block[1];
}

/** The guide's shell blocks (```bash), in document order, as written. */
export function guideShellBlocks(guidePath: string): string[] {
  const guide = readFileSync(guidePath, 'utf8');
  return [...guide.matchAll(/```bash\n([\s\S]*?)```/g)].map((match) => match[1]);
}

/** The commands of a shell block: lines joined at a trailing `\`, comments and blank lines dropped. */
export function commandsOf(block: string): string[] {
  return block
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}
