import type { SqlQuery } from '@ordinal/pg';
import { TABLES } from '../../log.constants.js';

/** A rule row of `personal_data_rules`. */
export interface RuleRow {
  message_type: string;
  rule: { subject: string; fields: string[]; replacement: Record<string, unknown> };
}

/** Every rule managed over REST or from the rules file. */
export function readRules(): SqlQuery {
  return { text: `SELECT message_type, rule FROM ${TABLES.personalDataRules}`, values: [] };
}

/** Sets the rule of one message type. */
export function upsertRule(messageType: string, rule: unknown, source: string): SqlQuery {
  return {
    text: `INSERT INTO ${TABLES.personalDataRules} (message_type, rule, source) VALUES ($1, $2::jsonb, $3)
           ON CONFLICT (message_type) DO UPDATE SET rule = excluded.rule, source = excluded.source, updated_at = now()`,
    values: [messageType, JSON.stringify(rule), source],
  };
}

/** A row of the erasure ledger. */
export interface ErasureRow {
  subject_hash: string;
  erased_at: Date;
  reason: string;
  marker_index: string | null;
}

/** The ledger entry of one subject, if erased. */
export function readErasure(subject: string): SqlQuery {
  return {
    text: `SELECT subject_hash, erased_at, reason, marker_index::text FROM ${TABLES.erasureLedger} WHERE subject_hash = $1`,
    values: [subject],
  };
}

/** Every subject the ledger names (a restore's reapply destroys their keys again). */
export function readErasedSubjects(): SqlQuery {
  return { text: `SELECT subject_hash FROM ${TABLES.erasureLedger}`, values: [] };
}

/** Records an erasure (the first one wins: erasing twice changes nothing). */
export function recordErasure(subject: string, reason: string, markerIndex: number): SqlQuery {
  return {
    text: `INSERT INTO ${TABLES.erasureLedger} (subject_hash, reason, marker_index) VALUES ($1, $2, $3)
           ON CONFLICT (subject_hash) DO NOTHING`,
    values: [subject, reason, markerIndex],
  };
}
