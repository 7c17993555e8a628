import { InvalidMessageError } from '@ordinal/log';
import { jsonValueProblem } from '@ordinal/pg';

/**
 * Applies the log's JSON rule (`jsonValueProblem`: storable text, exact numbers, the depth
 * limit) to a value the request carries, naming its path in the request (`events.2.data.x`,
 * `state.a`). The same 400 (`invalid_message`) the writer gives for a message's content.
 */
export function assertStorableJson(value: unknown, path: string): void {
  const problem = value === undefined || value === null ? null : jsonValueProblem(value, path);
  if (problem) throw new InvalidMessageError(`${problem.path} ${problem.reason}`);
}
