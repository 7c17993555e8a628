import { CreateSnapshots1764547200000 } from './1764547200000-create-snapshots.js';
import { EventSourcingSchemaComments1764547200001 } from './1764547200001-schema-comments.js';

/** The event-sourcing library's migrations, in order (the log's run separately). */
export const EVENT_SOURCING_MIGRATIONS = [
  CreateSnapshots1764547200000,
  EventSourcingSchemaComments1764547200001,
];
