import { mkdir, open, readdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { randomUUID } from 'node:crypto';

/**
 * Where archived segments go (docs/storage.md, "Archive store"): named objects, written whole
 * and read whole. Names are relative paths of `/`-separated parts made of letters, digits,
 * `.`, `_` and `-` (`messages_0000000000000001/manifest.json`), so a store may map them onto
 * a directory, object keys (S3, GCS) or anything else that keeps bytes by name.
 *
 * A store must make `put` atomic and durable before it resolves: a reader sees the old object
 * or the new one, never a part, and a crash after `put` resolved loses nothing (the segment's
 * rows are dropped from PostgreSQL after the archive was read back).
 */
export interface ArchiveStore {
  /** Stores `bytes` under `name`, replacing any object of that name. */
  put(name: string, bytes: Buffer): Promise<void>;
  /** The object's bytes; rejects with an error whose `code` is `ENOENT` when there is none. */
  get(name: string): Promise<Buffer>;
  /** The names of the objects under `prefix/` (none if there is none). */
  list(prefix: string): Promise<string[]>;
  /** Deletes the object (nothing if there is none). */
  delete(name: string): Promise<void>;
  /** Where the store keeps its objects, for operators (a directory, a bucket URL). */
  readonly location: string;
}

const NAME = /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)*$/;

/** Checks an object name (see `ArchiveStore`): no absolute paths, no `..`. */
export function checkObjectName(name: string): string {
  if (!NAME.test(name) || name.split('/').some((part) => part === '.' || part === '..'))
    throw new TypeError(`Bad archive object name ${JSON.stringify(name)}`);
  return name;
}

/**
 * An archive store in a directory (a local disk, or mounted object storage such as an NFS or
 * s3fs mount): each object is a file. A `put` writes a temporary file beside the target,
 * flushes it to disk, renames it over the target and flushes the directory, so the object is
 * whole and durable once `put` resolves.
 */
export class FilesystemArchiveStore implements ArchiveStore {
  readonly location: string;

  constructor(directory: string) {
    this.location = resolve(directory);
  }

  async put(name: string, bytes: Buffer): Promise<void> {
    const path = this.pathOf(name);
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.${randomUUID()}.tmp`;
    try {
      const file = await open(temporary, 'w');
      try {
        await file.writeFile(bytes);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
    const directory = await open(dirname(path), 'r');
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
  }

  get(name: string): Promise<Buffer> {
    return readFile(this.pathOf(name));
  }

  async list(prefix: string): Promise<string[]> {
    try {
      const names = await readdir(this.pathOf(prefix), { recursive: true, withFileTypes: true });
      return names
        .filter((entry) => entry.isFile() && !entry.name.endsWith('.tmp'))
        .map((entry) =>
          relative(this.location, join(entry.parentPath, entry.name)).split(sep).join('/'),
        )
        .sort();
    } catch (error) {
      if ((error as { code?: string }).code === 'ENOENT') return [];
      throw error;
    }
  }

  async delete(name: string): Promise<void> {
    await rm(this.pathOf(name), { force: true });
  }

  private pathOf(name: string): string {
    const path = join(this.location, ...checkObjectName(name).split('/'));
    if (!path.startsWith(this.location + sep))
      throw new TypeError(`Bad archive object name ${name}`);
    return path;
  }
}
