import { Logger } from '@nestjs/common';
import { execute, isOrdinalErrorCode, OrdinalError } from '@ordinal/pg';
import type { DataSource } from 'typeorm';
import {
  ConsumerOwnerError,
  ConsumerRequestFailedError,
  WaitTimeoutError,
} from '../errors/index.js';
import {
  completeRequest,
  insertRequest,
  pendingRequests,
  readRequest,
  type RequestRow,
} from '../sql/index.js';
import { PacedRun } from '../runner/paced-run.js';

/**
 * How often an owner looks for requests while NOTIFY reaches its process: a request's row is
 * announced (`consumer-request`, a trigger) and `kick` looks at once; this poll is the net.
 */
const QUIET_POLL_MS = 5_000;

/** What a request may ask of a consumer's owner. */
export type ConsumerCommand = 'rebuild' | 'rebuild-in-place' | 'replay-parked' | 'resume';

/**
 * Operations for a consumer another process owns: the requester writes a row in
 * `consumer_requests` and polls it; every process looks for requests addressed to the
 * consumers it owns (one query per look, only while it owns something), runs them and
 * records the result or error. It looks when a row is announced (`kick`, on the NOTIFY a
 * trigger sends), and otherwise every `pollMs` while NOTIFY does not reach it, every
 * QUIET_POLL_MS while it does. A typed error travels with its code: the requester raises an
 * error of that code (answered with its own status, as in-process); an error without one
 * (or with a code this version does not know) is `ConsumerRequestFailedError`.
 */
export class ConsumerRequests {
  private readonly logger = new Logger(ConsumerRequests.name);
  private looks: PacedRun | null = null;
  private closed = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly pollMs: number,
    /** Whether NOTIFY reaches this process (a request is then announced). */
    private readonly notified: () => boolean = () => false,
  ) {}

  /** Asks the owner of `consumer` to run `command`; resolves with its result. */
  async request(consumer: string, command: ConsumerCommand, timeoutMs: number): Promise<unknown> {
    const [{ id }] = await execute<{ id: string }>(
      this.dataSource.manager,
      insertRequest(consumer, command),
    );
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const [row] = await execute<RequestRow>(this.dataSource.manager, readRequest(id));
      if (row?.done_at) {
        if (row.error !== null) throw requestError(consumer, command, row.error, row.error_code);
        return row.result;
      }
      if (Date.now() > deadline) throw new WaitTimeoutError(consumer, 0, timeoutMs);
      await new Promise((resolve) => setTimeout(resolve, Math.min(100, this.pollMs)));
    }
  }

  /** Serves requests for the consumers `owned()` returns, with `run`. */
  serve(
    owned: () => string[],
    run: (consumer: string, command: ConsumerCommand) => Promise<unknown>,
  ): void {
    if (this.closed) return;
    this.looks = new PacedRun(
      async () => {
        const names = owned();
        if (names.length > 0) {
          const rows = await execute<RequestRow>(
            this.dataSource.manager,
            pendingRequests(names),
          ).catch(() => [] as RequestRow[]);
          for (const row of rows) {
            let result: unknown = null;
            let error: { message: string; code: string | null } | null = null;
            try {
              result = await run(row.consumer, row.command as ConsumerCommand);
            } catch (e) {
              error = {
                message: (e as Error)?.message ?? String(e),
                code: e instanceof OrdinalError ? e.code : null,
              };
            }
            this.logger.log(
              `'${row.consumer}': ran ${row.command} asked by another process${error ? ` (failed: ${error.message})` : ''}`,
            );
            await execute(this.dataSource.manager, completeRequest(row.id, result, error)).catch(
              () => undefined,
            );
          }
        }
      },
      () => (this.notified() ? QUIET_POLL_MS : this.pollMs),
    );
    this.looks.start();
  }

  /** Looks for requests now (one was announced, or NOTIFY reaches this process again). */
  kick(): void {
    this.looks?.now();
  }

  close(): void {
    this.closed = true;
    this.looks?.close();
  }
}

/** The error a request's owner recorded, raised again here: typed by its code when it has one. */
function requestError(
  consumer: string,
  command: ConsumerCommand,
  message: string,
  code: string | null,
): OrdinalError {
  return isOrdinalErrorCode(code)
    ? new ConsumerOwnerError(consumer, command, code, message)
    : new ConsumerRequestFailedError(consumer, command, message);
}
