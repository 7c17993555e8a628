import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { PersonalDataRedactor } from '@ordinal/log';
import { Scoped } from '../auth/scoped.decorator.js';
import { ApiErrors } from '../errors/api-errors.decorator.js';
import { ApiTraceHeaders } from '../tracing/api-trace-headers.decorator.js';
import { RedactRequestDto, RedactResponseDto } from './redact.dto.js';

/** Seals in place personal data stored in clear before its rule (docs/personal-data.md). */
@ApiTags('personal-data')
@ApiTraceHeaders()
@Controller('api/admin/redact')
export class RedactController {
  constructor(private readonly redactor: PersonalDataRedactor) {}

  @Post()
  @Scoped('admin')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Seal legacy personal data stored in clear',
    description:
      'Rewrites in place every stored row of a ruled message type (`messageType`, or every type with a rule) that holds personal fields in clear because it was appended before its rule: each becomes what an append under the rule would have stored (fields sealed under the subject’s key, replacements in the body, the content hash of both); index, stream, version, type, metadata and every other row stay as they were. Walks the log up to its head in bounded batches, then scans for rows still in clear. Rows whose subject is missing stay untouched and are listed (`unredactableRows`); an erased subject’s rows get the replacements and no key. Answers when done; running it again rewrites only what is left. 404 `no_personal_data_rule` for a type without a rule, 409 `redact_running` while another runs. Needs the `admin` scope.',
  })
  @ApiOkResponse({ type: RedactResponseDto })
  @ApiErrors(400, 404, 409, 421, 500, 503)
  async redact(@Body() body?: RedactRequestDto): Promise<RedactResponseDto> {
    return this.redactor.run({ messageType: body?.messageType, batchSize: body?.batchSize });
  }
}
