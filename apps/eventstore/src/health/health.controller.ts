import { Controller, Get, Optional, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { HealthResponseDto } from './health.response.js';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { LogLifecycle } from '@ordinal/log';
import { AmqpConnection } from '@ordinal/amqp';
import { ConsumersHealthIndicator } from '@ordinal/subscriptions';
import { Public } from '../auth/scopes.decorator.js';

/**
 * Liveness and readiness: 200 when the database answers and the StartMarker is written. With
 * AMQP on, `broker` reports the connection; a broker that is down makes the status
 * `degraded` (REST still works, AMQP recovers by itself) without failing the check.
 */
@ApiTags('operations')
@Controller('health')
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly lifecycle: LogLifecycle,
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
    const database = await this.dataSource
      .query('SELECT 1')
      .then(() => 'up' as const)
      .catch(() => 'down' as const);
    const ok = database === 'up';
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
      : broker === 'down' || projections?.status === 'down'
        ? 'degraded'
        : 'ok';
    return {
      status,
      database,
      ...(broker ? { broker } : {}),
      ...(projections ? { projections } : {}),
      startMarker: this.lifecycle.startMarker?.id ?? null,
    };
  }
}
