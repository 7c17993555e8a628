import { Controller, Get, Optional, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { HealthResponseDto } from './health.response.js';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { LogLifecycle, LogWriter } from '@ordinal/log';
import { driverError, isStorageFull } from '@ordinal/pg';
import { AmqpConnection } from '@ordinal/amqp';
import { ConsumersHealthIndicator } from '@ordinal/subscriptions';
import { Public } from '../auth/scopes.decorator.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';

/**
 * Liveness and readiness: 200 when the database answers and the StartMarker is written. With
 * AMQP on, `broker` reports the connection; a broker that is down makes the status
 * `degraded` (REST still works, AMQP recovers by itself) without failing the check. A database
 * out of disk (the last append failed for want of space, or the check itself did) is
 * `storage: 'full'` with what the database said, and `degraded`: a restart would not help. A
 * log that refused an append for passing index 2^53 − 1 is `log: 'full'`, and `degraded` too.
 */
@ApiTags('operations')
@ApiTraceHeaders()
@Controller('health')
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly lifecycle: LogLifecycle,
    private readonly writer: LogWriter,
    @Optional() private readonly amqp?: AmqpConnection,
    @Optional() private readonly consumers?: ConsumersHealthIndicator,
  ) {}

  @Get()
  @Public()
  @ApiOperation({ summary: 'Liveness and readiness', description: 'No token needed.' })
  @ApiOkResponse({ type: HealthResponseDto })
  @ApiResponse({
    status: 503,
    type: HealthResponseDto,
    description: 'The database does not answer',
    headers: { 'Retry-After': { schema: { type: 'integer' } } },
  })
  async health(@Res({ passthrough: true }) reply: FastifyReply): Promise<HealthResponseDto> {
    let storageError = this.writer.storageFull?.error;
    const database = await this.dataSource
      .query('SELECT 1')
      .then(() => 'up' as const)
      .catch((error: unknown) => {
        if (isStorageFull(error)) storageError ??= driverError(error).message;
        return 'down' as const;
      });
    const storage = storageError === undefined ? ('ok' as const) : ('full' as const);
    const ok = database === 'up' || storage === 'full';
    const log = this.writer.logFull ? ('full' as const) : ('ok' as const);
    if (!ok) reply.status(503).header('retry-after', '2');
    const broker = this.amqp ? (this.amqp.state === 'up' ? 'up' : 'down') : undefined;
    // A stuck projection (behind, no progress for ORDINAL_STUCK_AFTER_MS) degrades the status; the server still serves.
    const projections =
      ok && this.consumers
        ? await this.consumers
            .isHealthy('projections')
            .then((h) => h.projections)
            .catch(() => undefined)
        : undefined;
    const status = !ok
      ? 'error'
      : storage === 'full' || log === 'full' || broker === 'down' || projections?.status === 'down'
        ? 'degraded'
        : 'ok';
    return {
      status,
      database,
      storage,
      ...(storageError !== undefined ? { storageError } : {}),
      log,
      ...(broker ? { broker } : {}),
      ...(projections ? { projections } : {}),
      startMarker: this.lifecycle.startMarker?.id ?? null,
    };
  }
}
