import { Controller, Get, Optional } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { AmqpConnection, PushInterfaces, type InterfaceReport } from '@ordinal/amqp';
import { RequireScope } from '../auth/scopes.decorator.js';

/** The push interfaces: bookmark, lag and state of each. */
@ApiTags('operations')
@ApiBearerAuth()
@Controller('api/interfaces')
export class InterfacesController {
  constructor(
    @Optional() private readonly interfaces?: PushInterfaces,
    @Optional() private readonly connection?: AmqpConnection,
  ) {}

  @Get()
  @RequireScope('read')
  @ApiOkResponse({ description: '`{amqp, broker, interfaces: [{name, type, state, bookmark, lag, ...}]}`; AMQP off: an empty list' })
  async list(): Promise<{ amqp: boolean; broker: string | null; interfaces: InterfaceReport[] }> {
    if (!this.interfaces) return { amqp: false, broker: null, interfaces: [] };
    return { amqp: true, broker: this.connection?.state ?? null, interfaces: await this.interfaces.reports() };
  }
}
