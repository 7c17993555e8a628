import { GroupAccess } from './group-access.service.js';
import { CurrentPrincipal } from '../auth/current-principal.decorator.js';
import type { Principal } from '../auth/principal.js';
import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBody,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GroupFetchResponse, GroupSettleResponse } from '@ordinal/contract';
import { ConsumerGroupsService, type ConsumerGroupStatus } from '@ordinal/subscriptions';
import { Scoped } from '../auth/scoped.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { intParam } from '../events/query-params.js';
import { DefineGroupDto } from './dto/define-group.dto.js';
import {
  GroupAckDto,
  GroupFetchDto,
  GroupNackDto,
  GroupReplayDto,
} from './dto/group-requests.dto.js';
import {
  ConsumerGroupDto,
  ConsumerGroupListDto,
  GroupFetchResponseDto,
  GroupParkedListDto,
  GroupReplayResponseDto,
  GroupSettleResponseDto,
} from './dto/group.responses.js';
import { fetchResponseBody, type JsonBytes } from './group-delivery.js';
import { PersonalData } from '@ordinal/log';
import { PersonalScope } from '../personal-data/personal-scope.decorator.js';
import type { ConsumerGroupInput } from '@ordinal/subscriptions';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';

const GROUP_PARAM = { name: 'group', schema: { type: 'string' as const } };

/**
 * Consumer groups for external services (docs/consumer-groups.md): define, inspect and delete a
 * group; members fetch (long poll), acknowledge and give back events; parked references and
 * their replay. The stream is in ConsumerGroupStreamController.
 */
@ApiTags('consumer-groups')
@ApiTraceHeaders()
@Controller('api/consumer-groups')
export class ConsumerGroupsController {
  constructor(
    private readonly groups: ConsumerGroupsService,
    private readonly groupAccess: GroupAccess,
    private readonly personalData: PersonalData,
  ) {}

  @Get()
  @Scoped('read')
  @ApiOperation({
    summary: 'Every consumer group',
    description:
      'Every group whose whole source the caller may read (with access rules, the others are left out). Needs the `read` scope.',
  })
  @ApiOkResponse({ type: ConsumerGroupListDto })
  @ApiErrors(503)
  async list(@CurrentPrincipal() principal: Principal): Promise<{ groups: ConsumerGroupStatus[] }> {
    return { groups: this.groupAccess.readable(principal, await this.groups.list()) };
  }

  @Put(':group')
  @Scoped('admin')
  @ApiOperation({
    summary: 'Define a consumer group',
    description:
      'Creates the group (201) or updates the settings of an existing one (200: ackTimeoutMs, maxDeliveries, maxInFlight, parkAfter; another source, from, strategy or keyPath is a 409). Needs the `admin` scope.',
  })
  @ApiParam(GROUP_PARAM)
  @ApiResponse({ status: 201, type: ConsumerGroupDto, description: 'Created' })
  @ApiResponse({ status: 200, type: ConsumerGroupDto, description: 'Settings updated' })
  @ApiErrors(400, 409, 503)
  async define(
    @Param('group') group: string,
    @Body() body: DefineGroupDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ConsumerGroupStatus> {
    const { created } = await this.groups.define(group, body as unknown as ConsumerGroupInput);
    reply.status(created ? 201 : 200);
    return this.groups.status(group);
  }

  @Get(':group')
  @Scoped('read')
  @ApiOperation({
    summary: 'One consumer group',
    description: 'State, members, checkpoint, lag, in flight, parked. Needs the `read` scope.',
  })
  @ApiParam(GROUP_PARAM)
  @ApiOkResponse({ type: ConsumerGroupDto })
  @ApiErrors(403, 404, 503)
  async one(
    @CurrentPrincipal() principal: Principal,
    @Param('group') group: string,
  ): Promise<ConsumerGroupStatus> {
    await this.groupAccess.assertRead(principal, group);
    return this.groups.status(group);
  }

  @Delete(':group')
  @Scoped('admin')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a consumer group',
    description: 'With its members, deliveries and parked references. Needs the `admin` scope.',
  })
  @ApiParam(GROUP_PARAM)
  @ApiResponse({ status: 204, description: 'Deleted' })
  @ApiErrors(404, 503)
  async remove(@Param('group') group: string): Promise<void> {
    await this.groups.remove(group);
  }

  @Post(':group/fetch')
  @Scoped('read')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Fetch events (long poll)',
    description:
      'Joins or renews the member and hands it up to `max` events (no more than it may still hold, maxInFlight), waiting up to `waitMs` for one. Without `memberId` a new member is made up and returned. Needs the `read` scope.',
  })
  @ApiParam(GROUP_PARAM)
  @ApiBody({ type: GroupFetchDto, required: false })
  @ApiOkResponse({ type: GroupFetchResponseDto })
  @ApiErrors(400, 404, 409, 503)
  async fetch(
    @CurrentPrincipal() principal: Principal,
    @Param('group') group: string,
    // The DTO class itself (not a union with undefined, emitted as Object) so the pipe validates it.
    @Body() body: GroupFetchDto = {},
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
    @PersonalScope() personal = false,
  ): Promise<JsonBytes<GroupFetchResponse>> {
    await this.groupAccess.assertRead(principal, group);
    const abort = new AbortController();
    const gone = () => abort.abort();
    request.raw.once('close', gone);
    try {
      const fetched = await this.groups.fetch(group, body, abort.signal);
      const result = personal
        ? { ...fetched, events: await this.personalData.revealJson(fetched.events) }
        : fetched;
      // The messages come rendered by PostgreSQL: the answer is written as their bytes, not re-serialised.
      reply.type('application/json; charset=utf-8');
      return fetchResponseBody(result);
    } finally {
      request.raw.off('close', gone);
    }
  }

  @Post(':group/ack')
  @Scoped('read')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Acknowledge events',
    description:
      'Done with these indices. Those the member no longer holds are listed in `notHeld` and unchanged; a stale epoch is 409 `member_lease_lost`. Needs the `read` scope.',
  })
  @ApiParam(GROUP_PARAM)
  @ApiOkResponse({ type: GroupSettleResponseDto })
  @ApiErrors(400, 403, 404, 409, 503)
  async ack(
    @CurrentPrincipal() principal: Principal,
    @Param('group') group: string,
    @Body() body: GroupAckDto,
  ): Promise<GroupSettleResponse> {
    await this.groupAccess.assertRead(principal, group);
    const { done, notHeld, checkpoint } = await this.groups.ack(
      group,
      body.memberId,
      body.epoch,
      body.indices,
    );
    return { acknowledged: done, notHeld, checkpoint };
  }

  @Post(':group/nack')
  @Scoped('read')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Give events back',
    description:
      '`retry` (delivered again; parked after parkAfter failures or maxDeliveries deliveries), `park` (with `reason`) or `skip` (done, unprocessed). A stale epoch is 409 `member_lease_lost`. Needs the `read` scope.',
  })
  @ApiParam(GROUP_PARAM)
  @ApiOkResponse({ type: GroupSettleResponseDto })
  @ApiErrors(400, 403, 404, 409, 503)
  async nack(
    @CurrentPrincipal() principal: Principal,
    @Param('group') group: string,
    @Body() body: GroupNackDto,
  ): Promise<GroupSettleResponse> {
    await this.groupAccess.assertRead(principal, group);
    const { done, notHeld, checkpoint } = await this.groups.nack(
      group,
      body.memberId,
      body.epoch,
      body.indices,
      body.action,
      body.reason ?? `nack ${body.action}`,
    );
    return { nacked: done, notHeld, checkpoint };
  }

  @Get(':group/parked')
  @Scoped('read')
  @ApiOperation({
    summary: 'Parked events of a group',
    description: 'References (index, reason, attempts), oldest first. Needs the `read` scope.',
  })
  @ApiParam(GROUP_PARAM)
  @ApiQuery({
    name: 'limit',
    required: false,
    schema: { type: 'integer', minimum: 1, maximum: 10_000, default: 100 },
  })
  @ApiOkResponse({ type: GroupParkedListDto })
  @ApiErrors(400, 403, 404, 503)
  async parked(
    @CurrentPrincipal() principal: Principal,
    @Param('group') group: string,
    @Query('limit') limit?: string,
  ): Promise<GroupParkedListDto> {
    await this.groupAccess.assertRead(principal, group);
    return {
      group,
      parked: await this.groups.parked(group, intParam('limit', limit, 100, 1, 10_000)),
    };
  }

  @Post(':group/parked/replay')
  @Scoped('admin')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Replay parked events',
    description:
      'Puts up to `limit` parked events (oldest first) back to be delivered again, attempts starting over. Never moves the checkpoint back. Needs the `admin` scope.',
  })
  @ApiParam(GROUP_PARAM)
  @ApiBody({ type: GroupReplayDto, required: false })
  @ApiOkResponse({ type: GroupReplayResponseDto })
  @ApiErrors(400, 403, 404, 503)
  async replay(
    @CurrentPrincipal() principal: Principal,
    @Param('group') group: string,
    @Body() body: GroupReplayDto = {},
  ): Promise<GroupReplayResponseDto> {
    await this.groupAccess.assertRead(principal, group);
    return this.groups.replayParked(group, body.limit ?? 100);
  }
}
