import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ErrorResponseDto } from './error-response.dto.js';

const WHEN: Record<number, string> = {
  400: 'Malformed or invalid request; the message names the field or parameter',
  401: 'No bearer token, or an unknown one',
  403: 'The token lacks the scope this operation needs, or may not act for the tenant (`tenant_forbidden`)',
  404: 'Nothing at that index, name or id',
  405: 'Another method of this path; `Allow` lists them',
  408: 'The body did not arrive within ORDINAL_BODY_TIMEOUT_MS (a bulk import: sent nothing for ORDINAL_IMPORT_IDLE_TIMEOUT_MS)',
  409: 'Version conflict (`Ordinal-Current-Version` names the current version)',
  410: 'The stream was tombstoned (`stream_tombstoned`), or its tenant deleted (`tenant_deleted`): every call on it answers this, for ever',
  413: 'Body over ORDINAL_BODY_LIMIT',
  415: 'A body that is not application/json',
  421: 'This server is a replica reader (ORDINAL_ROLE=replica-reader): it does not write; send the request to a primary instance',
  422: 'Idempotency key reused with a different message',
  503: 'The database is unavailable or the write queue is full; retry after `Retry-After` seconds',
  507: 'The log is full (`log_full`): the append would pass index 2^53 − 1; nothing was stored, and a retry cannot succeed',
};

/** Documents the error answers an operation can give, all with the one error body. */
export function ApiErrors(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ApiExtraModels(ErrorResponseDto),
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: WHEN[status] ?? 'Error',
        content: { 'application/json': { schema: { $ref: getSchemaPath(ErrorResponseDto) } } },
        ...(status === 503
          ? {
              headers: {
                'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' } },
              },
            }
          : {}),
        ...(status === 405
          ? {
              headers: {
                Allow: { description: 'The methods this path has', schema: { type: 'string' } },
              },
            }
          : {}),
      }),
    ),
  );
}
