import { CreateLog1764460800000 } from './1764460800000-create-log.js';

/** The log's migrations, in order. */
export const LOG_MIGRATIONS = [CreateLog1764460800000];
