import { CreateLog1764460800000 } from './1764460800000-create-log.js';
import { CreateConcurrentOrdering1764460800001 } from './1764460800001-create-concurrent-ordering.js';
import { DurableWatermark1764460800002 } from './1764460800002-durable-watermark.js';
import { SkippedArrivalsIndex1764460800150 } from './1764460800150-skipped-arrivals-index.js';
import { CorrelationColumns1764460800016 } from './1764460800016-correlation-columns.js';
import { LateWatch1764460800210 } from './1764460800210-late-watch.js';
import { SequenceMaxPosition1764460800211 } from './1764460800211-sequence-max-position.js';

/** The log's migrations, in order. */
export const LOG_MIGRATIONS = [
  CreateLog1764460800000,
  CreateConcurrentOrdering1764460800001,
  DurableWatermark1764460800002,
  CorrelationColumns1764460800016,
  SkippedArrivalsIndex1764460800150,
  LateWatch1764460800210,
  SequenceMaxPosition1764460800211,
];
