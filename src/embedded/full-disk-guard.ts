import { Logger } from '@nestjs/common';
import type { PGlite } from '@electric-sql/pglite';
import { describeFreeSpace, hasFreeSpace, REOPEN_FREE_BYTES } from './free-space.js';
import {
  errorResponse,
  ErrorResponseScanner,
  messageType,
  readyForQuery,
  type WireError,
} from './wire-messages.js';

/** How often a closed database looks for free space again. @default 1000 */
const RECHECK_MS = 1000;

/** Client messages whose answer ends with ReadyForQuery: a simple query, a Sync, a function call. */
const ENDS_WITH_READY = new Set(['Q', 'S', 'F']);

/** What the guard needs from its owner. */
export interface FullDiskGuardOptions {
  dataDir: string;
  /** Opens PGlite on the data folder again. */
  open: () => Promise<PGlite>;
  /** Called once PGlite is open again: drop every client connection (their session is gone). */
  reopened: () => Promise<void>;
}

/**
 * Whether PGlite must be closed after this error. A PANIC: its one backend is gone (a
 * write-ahead log that could not grow while committing is one), and its next query, even a
 * read, spins the CPU forever inside WebAssembly, blocking the whole process. Out of a resource
 * (SQLSTATE class 53, but 53300 too_many_connections) likewise, except a table or index that
 * could not grow ("could not extend file"), after which it goes on serving. Closing it is
 * safe: what it committed is on disk.
 */
export function closesDatabase(error: WireError): boolean {
  if (error.severity === 'PANIC') return true;
  return (
    error.code.startsWith('53') &&
    error.code !== '53300' &&
    !error.message.startsWith('could not extend file')
  );
}

/**
 * Stands between the socket server and PGlite (as the `db` the server is given). It passes
 * every message through and reads the answers; once PGlite reports it is out of space in a way
 * that breaks it, the guard lets no further message reach it: it closes it, answers every client
 * itself with that error (SQLSTATE 53100, so the server answers 503 storage_full and its /health
 * says so), and reopens PGlite once the data folder's disks have room again.
 */
export class FullDiskGuard {
  private readonly logger = new Logger('EmbeddedPostgres');
  private db: PGlite | null;
  private closedBecause: WireError | null = null;
  private recovery: Promise<void> | null = null;
  private stopped = false;
  /** The object the socket server uses as its PGlite. */
  readonly database: PGlite;

  constructor(
    db: PGlite,
    private readonly options: FullDiskGuardOptions,
  ) {
    this.db = db;
    const overrides: Partial<Record<keyof PGlite, unknown>> = {
      execProtocolRawStream: this.execProtocolRawStream.bind(this),
      runExclusive: this.runExclusive.bind(this),
      isInTransaction: () => (this.open ? this.open.isInTransaction() : false),
      exec: (...args: Parameters<PGlite['exec']>) =>
        this.open ? this.open.exec(...args) : Promise.resolve([]),
    };
    this.database = new Proxy({} as PGlite, {
      get: (_target, property) => {
        if (property in overrides) return overrides[property as keyof PGlite];
        const value = (this.db as unknown as Record<PropertyKey, unknown>)?.[property];
        return typeof value === 'function' ? (value.bind(this.db) as unknown) : value;
      },
    });
  }

  /** PGlite, when it may be used. */
  private get open(): PGlite | null {
    return this.closedBecause ? null : this.db;
  }

  /** Closes PGlite (if open) and stops looking for space. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.recovery;
    await this.db?.close();
    this.db = null;
  }

  private async runExclusive<T>(work: () => Promise<T>): Promise<T> {
    const db = this.open;
    if (!db) return work();
    try {
      return await db.runExclusive(work);
    } finally {
      // After PGlite's lock is released: close it then, not from inside.
      if (this.closedBecause) this.recovery ??= this.closeAndReopen();
    }
  }

  private async execProtocolRawStream(
    message: Uint8Array,
    options: Parameters<PGlite['execProtocolRawStream']>[1],
  ): Promise<void> {
    const db = this.open;
    if (!db) {
      const answer = this.refusal(message);
      if (answer.length > 0) options.onRawData(answer);
      return;
    }
    const scanner = new ErrorResponseScanner();
    await db.execProtocolRawStream(message, {
      ...options,
      onRawData: (data) => {
        scanner.push(data);
        options.onRawData(data);
      },
    });
    const broken = scanner.errors.find(closesDatabase);
    if (!broken) return;
    this.closedBecause ??= broken;
    // After a PANIC PGlite's backend is gone and ends its answer without ReadyForQuery; a client
    // would wait for it forever. End the answer, so the client goes on (to the guard's refusals).
    if (!scanner.ready && ENDS_WITH_READY.has(messageType(message)))
      options.onRawData(readyForQuery());
  }

  /**
   * What a real server would answer while it cannot serve: an error for a startup message
   * (FATAL), a simple query or an Execute; ReadyForQuery ending a simple query or at Sync; the
   * other parts of an extended query are skipped, as after any error until Sync.
   */
  private refusal(message: Uint8Array): Uint8Array {
    const why = this.closedBecause!;
    const error = {
      code: '53100',
      message: `The embedded database is closed until its disk has room (${why.message}); it reopens by itself once ${REOPEN_FREE_BYTES / 1024 / 1024} MiB are free on the disks of ${this.options.dataDir}`,
    };
    switch (messageType(message)) {
      case '':
        return errorResponse('FATAL', error);
      case 'Q':
      case 'F':
      case 'c':
      case 'f':
        return Buffer.concat([errorResponse('ERROR', error), readyForQuery()]);
      case 'E':
        return errorResponse('ERROR', error);
      case 'S':
        return readyForQuery();
      default:
        return new Uint8Array(0);
    }
  }

  private async closeAndReopen(): Promise<void> {
    const { dataDir } = this.options;
    this.logger.error(
      `The embedded database ran out of disk (${this.closedBecause!.message}; ${describeFreeSpace(dataDir)}): closed it; requests answer 503 storage_full until it reopens, which it does by itself once ${REOPEN_FREE_BYTES / 1024 / 1024} MiB are free`,
    );
    await this.db?.close().catch((error: unknown) => {
      this.logger.warn(`Closing the embedded database failed: ${String(error)}`);
    });
    this.db = null;
    let told = false;
    while (!this.stopped) {
      await new Promise((resolve) => setTimeout(resolve, RECHECK_MS).unref());
      if (this.stopped || !hasFreeSpace(dataDir)) continue;
      try {
        this.db = await this.options.open();
      } catch (error) {
        if (!told)
          this.logger.warn(
            `The embedded database does not open yet (${(error as Error).message}; ${describeFreeSpace(dataDir)}); trying again every second`,
          );
        told = true;
        continue;
      }
      if (this.stopped) break;
      // Old connections still think their session (prepared statements, LISTEN) exists: drop them first.
      await this.options.reopened();
      this.closedBecause = null;
      this.recovery = null;
      this.logger.log(
        `The embedded database reopened in ${dataDir} (${describeFreeSpace(dataDir)})`,
      );
      return;
    }
  }
}
