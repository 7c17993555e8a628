import type { SqlQuery } from '@ordinal/pg';
import { TABLES } from '@ordinal/log/internal';
import { ES_TABLES } from '../event-sourcing.constants.js';

/**
 * Deletes the snapshots of every stream holding an event of an erased subject (its id hash):
 * a snapshot may hold the clear values its aggregate saw. The aggregate reloads from events,
 * which now read the replacements. Found through the `messages_personal_subject` index, so it
 * costs the subject's events, not the log's size.
 */
export function deleteErasedSnapshots(subject: string): SqlQuery {
  return {
    text: `DELETE FROM ${ES_TABLES.snapshots} WHERE stream_id IN (
             SELECT DISTINCT stream_id FROM ${TABLES.messages}
             WHERE personal->>'subject' = $1 AND personal IS NOT NULL AND stream_id IS NOT NULL)`,
    values: [subject],
  };
}
