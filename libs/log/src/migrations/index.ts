import { CreateLog1764460800000 } from './1764460800000-create-log.js';
import { CreateConcurrentOrdering1764460800001 } from './1764460800001-create-concurrent-ordering.js';
import { DurableWatermark1764460800002 } from './1764460800002-durable-watermark.js';
import { SkippedArrivalsIndex1764460800150 } from './1764460800150-skipped-arrivals-index.js';
import { CorrelationColumns1764460800016 } from './1764460800016-correlation-columns.js';
import { LateWatch1764460800210 } from './1764460800210-late-watch.js';
import { SequenceMaxPosition1764460800211 } from './1764460800211-sequence-max-position.js';
import { PassedPositionsGuard1764460800230 } from './1764460800230-passed-positions-guard.js';
import { SchemaComments1764460800240 } from './1764460800240-schema-comments.js';
import { StreamLifecycle1764460800300 } from './1764460800300-stream-lifecycle.js';
import { CreateStreamTicketNonces1765400000000 } from './1765400000000-create-stream-ticket-nonces.js';
import { LifecycleSchemaComments1765400000010 } from './1765400000010-lifecycle-schema-comments.js';
import { AppendCheckAfterLock1765500000000 } from './1765500000000-append-check-after-lock.js';
import { LifecycleNotice1765500000010 } from './1765500000010-lifecycle-notice.js';
import { PersonalData1766000000000 } from './1766000000000-personal-data.js';
import { ConcurrentAppendCheckAfterLock1766000000100 } from './1766000000100-concurrent-append-check-after-lock.js';
import { Segments1766100000000 } from './1766100000000-segments.js';
import { Archive1766200000000 } from './1766200000000-archive.js';
import { Tenants1766300000000 } from './1766300000000-tenants.js';
import { DeletedTenants1766300000100 } from './1766300000100-deleted-tenants.js';
import { IdempotencyKeysFreeAfterLock1766300000200 } from './1766300000200-idempotency-keys-free-after-lock.js';

/** The log's migrations, in order. */
export const LOG_MIGRATIONS = [
  CreateLog1764460800000,
  CreateConcurrentOrdering1764460800001,
  DurableWatermark1764460800002,
  CorrelationColumns1764460800016,
  SkippedArrivalsIndex1764460800150,
  LateWatch1764460800210,
  SequenceMaxPosition1764460800211,
  PassedPositionsGuard1764460800230,
  SchemaComments1764460800240,
  StreamLifecycle1764460800300,
  CreateStreamTicketNonces1765400000000,
  LifecycleSchemaComments1765400000010,
  AppendCheckAfterLock1765500000000,
  LifecycleNotice1765500000010,
  PersonalData1766000000000,
  ConcurrentAppendCheckAfterLock1766000000100,
  Segments1766100000000,
  Archive1766200000000,
  Tenants1766300000000,
  DeletedTenants1766300000100,
  IdempotencyKeysFreeAfterLock1766300000200,
];
