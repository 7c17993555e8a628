import { BadRequestException, Body, ConflictException, Controller, HttpCode, NotFoundException, Optional, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { PushInterfaces } from '@ordinal/amqp';
import { RequireScope } from '../auth/scopes.decorator.js';

/** Rewinds a replayable interface: its bookmark set back (or forward) and everything after it sent again. */
@ApiTags('operations')
@ApiBearerAuth()
@Controller('api/interfaces')
export class InterfaceRewindController {
  constructor(@Optional() private readonly interfaces?: PushInterfaces) {}

  @Post(':name/rewind')
  @RequireScope('admin')
  @HttpCode(200)
  @ApiOkResponse({ description: 'Body `{"to": <index>}`: the bookmark is set to `to`; messages after it are sent again. Answers `{name, bookmark}`' })
  async rewind(@Param('name') name: string, @Body() body: unknown): Promise<{ name: string; bookmark: number }> {
    const to = (body as { to?: unknown } | null)?.to;
    if (typeof to !== 'number' || !Number.isSafeInteger(to) || to < 0) throw new BadRequestException('Send {"to": <index>}: the bookmark to rewind to, an integer >= 0 (0 resends the whole log)');
    if (!this.interfaces) throw new NotFoundException(`No interface '${name}': this server runs without AMQP`);
    const outcome = await this.interfaces.rewind(name, to);
    if (outcome === 'not-found') throw new NotFoundException(`No interface '${name}' is configured (ORDINAL_INTERFACES)`);
    if (outcome === 'not-replayable') throw new ConflictException(`Interface '${name}' is realtime: it has no bookmark to rewind`);
    return { name, bookmark: to };
  }
}
