import {
  BadRequestException,
  Body,
  ConflictException,
  Controller,
  HttpCode,
  NotFoundException,
  Optional,
  Param,
  Post,
} from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { PushInterfaces } from '@ordinal/amqp';
import { Scoped } from '../auth/scoped.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { RewindResponseDto } from './operations.response.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';

/** Rewinds a replayable interface: its bookmark set back (or forward) and everything after it sent again. */
@ApiTags('operations')
@ApiTraceHeaders()
@Controller('api/interfaces')
export class InterfaceRewindController {
  constructor(@Optional() private readonly interfaces?: PushInterfaces) {}

  @Post(':name/rewind')
  @Scoped('admin')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Rewind a replayable interface',
    description:
      'Sets its bookmark to `to`; every message after it is sent again. Needs the `admin` scope.',
  })
  @ApiParam({ name: 'name', schema: { type: 'string' } })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['to'],
      additionalProperties: false,
      properties: { to: { type: 'integer', minimum: 0, description: '0 resends the whole log' } },
    },
  })
  @ApiOkResponse({ type: RewindResponseDto })
  @ApiErrors(400, 404, 409, 421, 503)
  async rewind(
    @Param('name') name: string,
    @Body() body: unknown,
  ): Promise<{ name: string; bookmark: number }> {
    const to = (body as { to?: unknown } | null)?.to;
    if (typeof to !== 'number' || !Number.isSafeInteger(to) || to < 0)
      throw new BadRequestException(
        'Send {"to": <index>}: the bookmark to rewind to, an integer >= 0 (0 resends the whole log)',
      );
    if (!this.interfaces)
      throw new NotFoundException(`No interface '${name}': this server runs without AMQP`);
    const outcome = await this.interfaces.rewind(name, to);
    if (outcome === 'not-found')
      throw new NotFoundException(`No interface '${name}' is configured (ORDINAL_INTERFACES)`);
    if (outcome === 'not-replayable')
      throw new ConflictException(`Interface '${name}' is realtime: it has no bookmark to rewind`);
    return { name, bookmark: to };
  }
}
