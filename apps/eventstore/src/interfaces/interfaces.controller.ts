import { Controller, Get, Optional } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Scoped } from '../auth/scoped.decorator.js';
import { InterfacesResponseDto } from './interfaces.response.js';
import { AmqpConnection, PushInterfaces, type InterfaceReport } from '@ordinal/amqp';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';

/** The push interfaces: bookmark, lag and state of each. */
@ApiTags('operations')
@ApiTraceHeaders()
@Controller('api/interfaces')
export class InterfacesController {
  constructor(
    @Optional() private readonly interfaces?: PushInterfaces,
    @Optional() private readonly connection?: AmqpConnection,
  ) {}

  @Get()
  @Scoped('read')
  @ApiOperation({
    summary: 'Push interfaces and their state',
    description:
      'Every interface any server registered on the database: bookmark, position, lag and state of each, and the process publishing it (pid@host, heartbeat age, its state and position there); AMQP off: an empty list. Needs the `read` scope.',
  })
  @ApiOkResponse({ type: InterfacesResponseDto })
  async list(): Promise<{ amqp: boolean; broker: string | null; interfaces: InterfaceReport[] }> {
    if (!this.interfaces) return { amqp: false, broker: null, interfaces: [] };
    return {
      amqp: true,
      broker: this.connection?.state ?? null,
      interfaces: await this.interfaces.reports(),
    };
  }
}
