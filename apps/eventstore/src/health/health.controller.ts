import { Controller, Get, Res } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { LogLifecycle } from '@ordinal/log';
import { Public } from '../auth/scopes.decorator.js';

/** Liveness and readiness: 200 when the database answers and the StartMarker is written. */
@ApiTags('operations')
@Controller('health')
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly lifecycle: LogLifecycle,
  ) {}

  @Get()
  @Public()
  async health(@Res({ passthrough: true }) reply: FastifyReply): Promise<Record<string, unknown>> {
    const database = await this.dataSource
      .query('SELECT 1')
      .then(() => 'up' as const)
      .catch(() => 'down' as const);
    const ok = database === 'up';
    if (!ok) reply.status(503).header('retry-after', '2');
    return { status: ok ? 'ok' : 'error', database, startMarker: this.lifecycle.startMarker?.id ?? null };
  }
}
