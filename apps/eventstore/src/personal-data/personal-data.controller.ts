import {
  Body,
  Controller,
  Get,
  HttpCode,
  NotFoundException,
  Param,
  Post,
  Put,
} from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { PersonalData, SubjectErasure } from '@ordinal/log';
import { Scoped } from '../auth/scoped.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';
import {
  EraseSubjectDto,
  ErasureResponseDto,
  PersonalDataRuleDto,
  PersonalDataRuleResponseDto,
  PersonalDataRulesResponseDto,
  ReapplyResponseDto,
} from './personal-data.dto.js';

/** Personal data (docs/personal-data.md): the rules per message type, erasure, the ledger. */
@ApiTags('personal-data')
@ApiTraceHeaders()
@Controller('api')
export class PersonalDataController {
  constructor(
    private readonly personal: PersonalData,
    private readonly erasure: SubjectErasure,
  ) {}

  @Get('personal-data/rules')
  @Scoped('admin')
  @ApiOperation({ summary: 'Every personal-data rule', description: 'Needs the `admin` scope.' })
  @ApiOkResponse({ type: PersonalDataRulesResponseDto })
  @ApiErrors(503)
  list(): PersonalDataRulesResponseDto {
    return {
      rules: [...this.personal.allRules()].map(([messageType, rule]) => ({
        messageType,
        ...rule,
      })),
    };
  }

  @Get('personal-data/rules/:messageType')
  @Scoped('admin')
  @ApiOperation({
    summary: 'The personal-data rule of a message type',
    description: '404 when the type has none. Needs the `admin` scope.',
  })
  @ApiParam({ name: 'messageType', schema: { type: 'string' } })
  @ApiOkResponse({ type: PersonalDataRuleResponseDto })
  @ApiErrors(404)
  get(@Param('messageType') messageType: string): PersonalDataRuleResponseDto {
    const rule = this.personal.ruleOf(messageType);
    if (!rule) throw new NotFoundException(`Message type ${messageType} has no personal-data rule`);
    return { messageType, ...rule };
  }

  @Put('personal-data/rules/:messageType')
  @Scoped('admin')
  @ApiOperation({
    summary: 'Set the personal-data rule of a message type',
    description:
      'From now on, each message of the type has its personal fields sealed under its subject’s key; a message without the subject is refused (400). Messages stored before keep what they were stored with until `POST /api/admin/redact` seals them in place. Needs the `admin` scope.',
  })
  @ApiParam({ name: 'messageType', schema: { type: 'string' } })
  @ApiOkResponse({ type: PersonalDataRuleResponseDto })
  @ApiErrors(400, 500, 503)
  async put(
    @Param('messageType') messageType: string,
    @Body() body: PersonalDataRuleDto,
  ): Promise<PersonalDataRuleResponseDto> {
    const rule = await this.personal.defineRule(messageType, { ...body }, 'api');
    return { messageType, ...rule };
  }

  @Post('subjects/:id/erase')
  @Scoped('admin')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Erase a subject’s personal data',
    description:
      'Destroys the subject’s key: every reader, on every path, gets the replacements of its personal fields from now on; appends a `$subject-erased {subject}` marker and records the erasure in the ledger. Indices, versions and stream heads do not change. Erasing twice is a no-op (`alreadyErased`). Needs the `admin` scope.',
  })
  @ApiParam({
    name: 'id',
    description: 'The subject id, as its messages hold it',
    schema: { type: 'string' },
  })
  @ApiOkResponse({ type: ErasureResponseDto })
  @ApiErrors(400, 500, 503)
  async erase(@Param('id') id: string, @Body() body: EraseSubjectDto): Promise<ErasureResponseDto> {
    return this.erasure.erase(id, body.reason);
  }

  @Post('erasures/reapply')
  @Scoped('admin')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Reapply the erasure ledger',
    description:
      'Destroys again the key of every subject the ledger names (after restoring the key store from a backup). Every start does it too. Needs the `admin` scope.',
  })
  @ApiOkResponse({ type: ReapplyResponseDto })
  @ApiErrors(500, 503)
  async reapply(): Promise<ReapplyResponseDto> {
    return this.erasure.reapply();
  }
}
