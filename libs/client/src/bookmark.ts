import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * Where a pull consumer keeps the index of the last message it processed. `load` returns 0
 * when there is none yet. The consumer saves only indices its handler has finished.
 */
export interface Bookmark {
  load(): Promise<number>;
  save(index: number): Promise<void>;
}

/**
 * A bookmark in a file holding the index as text. Saves write a temporary file and rename
 * it, so a crash leaves the old or the new value, never a torn one.
 */
export function fileBookmark(path: string): Bookmark {
  const temporary = `${path}.tmp`;
  return {
    async load() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
        throw error;
      }
      const index = Number(text.trim() || '0');
      if (!Number.isSafeInteger(index) || index < 0)
        throw new Error(`Bookmark file ${path} does not hold an index: '${text.trim()}'`);
      return index;
    },
    async save(index) {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(temporary, `${index}\n`);
      await rename(temporary, path);
    },
  };
}

/** A bookmark kept by your own code (e.g. a row in your database, in your transaction). */
export function callbackBookmark(callbacks: {
  load: () => Promise<number> | number;
  save: (index: number) => Promise<void> | void;
}): Bookmark {
  return {
    load: async () => (await callbacks.load()) ?? 0,
    save: async (index) => {
      await callbacks.save(index);
    },
  };
}

/** A bookmark in memory: starts at `start` (default 0) and is lost with the process. */
export function memoryBookmark(start = 0): Bookmark & { readonly value: number } {
  let value = start;
  return {
    get value() {
      return value;
    },
    load: () => Promise.resolve(value),
    save: (index) => {
      value = index;
      return Promise.resolve();
    },
  };
}
