import {
  Catch,
  HttpException,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import {
  ImportLineError,
  StreamDeletedError,
  StreamTombstonedError,
  VersionConflictError,
} from '@ordinal/log';
import {
  DatabaseUnavailableError,
  insufficientResources,
  OrdinalError,
  ReadOnlyReplicaError,
} from '@ordinal/pg';
import { SnapshotVersionExceedsStreamError } from '@ordinal/event-sourcing';
import type { OrdinalErrorCode } from '@ordinal/contract';
import { errorBody, type ErrorBody } from './error-body.js';
import { isDatabaseOutage, isReadOnlyDatabase, isRefusedData } from './database-errors.js';
import { STATUS_BY_CODE } from './status-by-code.js';

/**
 * The one place errors become HTTP responses: library errors by their `code`, Nest's HTTP
 * exceptions and Fastify's own errors (bad JSON, body too large) by their status, anything
 * else as a logged 500. Every body is `{statusCode, error, message}`.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpErrors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { body, headers } = this.toResponse(exception);
    if (reply.sent) return;
    for (const [name, value] of Object.entries(headers)) reply.header(name, value);
    reply.status(body.statusCode).send(body);
  }

  toResponse(exception: unknown): { body: ErrorBody; headers: Record<string, string> } {
    if (exception instanceof VersionConflictError) {
      return {
        body: errorBody(409, exception.message, {
          error: exception.code,
          code: exception.code,
          streamId: exception.streamId,
          current: exception.current,
          expected: exception.expected,
        }),
        headers: { 'ordinal-current-version': String(exception.current) },
      };
    }
    if (exception instanceof StreamDeletedError || exception instanceof StreamTombstonedError) {
      const deleted = exception instanceof StreamDeletedError;
      return {
        body: errorBody(STATUS_BY_CODE[exception.code], exception.message, {
          code: exception.code,
          streamId: exception.streamId,
          ...(deleted ? { lastVersion: exception.lastVersion } : {}),
        }),
        headers: {},
      };
    }
    if (exception instanceof SnapshotVersionExceedsStreamError) {
      return {
        body: errorBody(409, exception.message, {
          error: exception.code,
          code: exception.code,
          streamId: exception.streamId,
          version: exception.version,
          current: exception.current,
        }),
        headers: {},
      };
    }
    if (exception instanceof OrdinalError) {
      // `?? 500`: a code from outside the union (plain JavaScript, a cast) is still answered.
      const status = STATUS_BY_CODE[exception.code] ?? 500;
      // Not a 503 (transient) nor a 507 (a full log: the writer logs its first refusal, and
      // every producer's request would repeat it).
      if (status >= 500 && status !== 503 && status !== 507)
        this.logger.error(`${exception.code}: ${exception.message}`);
      const headers: Record<string, string> = status === 503 ? { 'retry-after': '2' } : {};
      const extra: Record<string, unknown> = { code: exception.code };
      if (exception instanceof DatabaseUnavailableError && exception.outcomeUnknown)
        extra.outcomeUnknown = true;
      if (exception instanceof ImportLineError) extra.line = exception.line;
      return { body: errorBody(status, exception.message, extra), headers };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const response = exception.getResponse();
      if (typeof response === 'object' && response !== null) {
        const r = response as Record<string, unknown>;
        const message = Array.isArray(r.message)
          ? r.message.join('; ')
          : // eslint-disable-next-line @typescript-eslint/no-base-to-string -- a thrower's message of any kind, as text
            String(r.message ?? exception.message);
        const { statusCode: _s, error: _e, message: _m, ...extra } = r;
        return { body: errorBody(status, message, extra), headers: {} };
      }
      return { body: errorBody(status, String(response)), headers: {} };
    }
    const fastifyStatus = (exception as { statusCode?: number })?.statusCode;
    if (typeof fastifyStatus === 'number' && fastifyStatus >= 400 && fastifyStatus < 500) {
      const e = exception as { message?: string; code?: string };
      return {
        body: errorBody(fastifyStatus, e.message ?? 'Bad request', e.code ? { code: e.code } : {}),
        headers: {},
      };
    }
    // Before the outage codes: "cannot … during recovery" can come with SQLSTATE 55000.
    if (isReadOnlyDatabase(exception)) {
      const error = new ReadOnlyReplicaError(
        'The database refused the write: it is read-only (a replica reader, or a standby); nothing was stored, send writes to a primary instance',
      );
      return { body: errorBody(421, error.message, { code: error.code }), headers: {} };
    }
    // A raw driver error out of disk or memory (a read's sort spilling to a full disk): a 503 too.
    const lacking = insufficientResources(exception, 'The request');
    if (lacking) return this.toResponse(lacking);
    if (isDatabaseOutage(exception)) {
      return {
        body: errorBody(503, 'The database is unavailable; retry later', {
          code: 'database_unavailable' satisfies OrdinalErrorCode,
        }),
        headers: { 'retry-after': '2' },
      };
    }
    if (isRefusedData(exception)) {
      return {
        body: errorBody(400, `The database refused the data: ${(exception as Error).message}`, {
          code: 'invalid_message' satisfies OrdinalErrorCode,
        }),
        headers: {},
      };
    }
    this.logger.error(`Unhandled error: ${(exception as Error)?.stack ?? String(exception)}`);
    return { body: errorBody(500, 'Internal server error'), headers: {} };
  }
}
