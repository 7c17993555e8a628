import { STATUS_CODES } from 'node:http';

/** The JSON body of every error response: `{statusCode, error, message}` plus optional detail. */
export interface ErrorBody {
  statusCode: number;
  error: string;
  message: string;
  [extra: string]: unknown;
}

export function errorBody(
  statusCode: number,
  message: string,
  extra: Record<string, unknown> = {},
): ErrorBody {
  return { statusCode, error: STATUS_CODES[statusCode] ?? 'Error', message, ...extra };
}
