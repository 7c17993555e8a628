import { CreateLog1764460800000 } from './1764460800000-create-log.js';
import { CreateConcurrentOrdering1764460800001 } from './1764460800001-create-concurrent-ordering.js';
import { DurableWatermark1764460800002 } from './1764460800002-durable-watermark.js';
import { SkippedArrivalsIndex1764460800150 } from './1764460800150-skipped-arrivals-index.js';
import { CorrelationColumns1764460800016 } from './1764460800016-correlation-columns.js';
import { SequenceMaxPosition1764460800151 } from './1764460800151-sequence-max-position.js';

/** The log's migrations, in order. */
export const LOG_MIGRATIONS = [
  CreateLog1764460800000,
  CreateConcurrentOrdering1764460800001,
  DurableWatermark1764460800002,
  CorrelationColumns1764460800016,
  SkippedArrivalsIndex1764460800150,
  SequenceMaxPosition1764460800151,
];
