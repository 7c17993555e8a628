import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MESSAGE_FIELDS } from '@ordinal/contract';
import { execute, OrdinalError } from '@ordinal/pg';
import { TABLES } from '../log.constants.js';
import { LOG_MODULE_OPTIONS } from '../log.module-definition.js';
import type { ResolvedLogOptions, ResolvedPersonalDataOptions } from '../log-options.js';
import type { AppendRequest, NewMessage, SealedFields, StoredMessage } from '../message.js';
import {
  InvalidMessageError,
  MasterKeyMismatchError,
  NoPersonalDataRuleError,
  SubjectErasedError,
  TenantDeletedError,
} from '../errors/index.js';
import { replaceAt } from './json-pointer.js';
import { messageTextParts, spliceClear, type MessageTextParts } from './json-splice.js';
import { planSeal, type SealPlan } from './seal-plan.js';
import {
  finishStoredSeal,
  planStoredSeal,
  type StoredRow,
  type StoredSeal,
} from './seal-stored.js';
import { RenderedMessage, renderedJson } from '../row-mapper.js';
import {
  isOrdinalMessageType,
  resolvePersonalDataRule,
  type PersonalDataRule,
} from './personal-data-rule.js';
import {
  CHECK_CONTEXT,
  fieldContext,
  keyContext,
  newDataKeys,
  open,
  openBase64,
  seal,
  subjectHash,
} from './personal-crypto.js';
import { KeyStoreConnection } from './key-store.js';
import {
  createKeys,
  destroyKeys,
  destroyTenantKeys,
  ensureCheck,
  readKeys,
  type SubjectKeyRow,
} from './sql/key-store.sql.js';
import { readRules, upsertRule, type RuleRow } from './sql/personal-data.sql.js';

/** A rule with its defaults, as the writer applies it. */
export type ResolvedRule = Required<PersonalDataRule>;

/** Where a rule came from. */
export type RuleSource = 'api' | 'file' | 'code';

/** A subject's data key, or `erased` once an erasure destroyed it. */
type SubjectKey = Buffer | 'erased';

/** Unwrapped keys kept in memory at most (the oldest go first). */
const KEY_CACHE_SIZE = 100_000;

/** The key the development mode uses without a configured one: never for real data. */
const DEVELOPMENT_KEY = createHash('sha256').update('ordinal development master key').digest();

function sameFields(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const NAMES = Object.keys(MESSAGE_FIELDS) as (keyof typeof MESSAGE_FIELDS)[];

/**
 * Personal data on the log (docs/personal-data.md): the rules per message type, the sealing of
 * each personal field under its subject's data key on append (AES-256-GCM, the key created on
 * first use and wrapped by the master key), the clear values for a reader with the `personal`
 * scope (`reveal`), and the destruction of keys (erasure). Keys live in the key store, apart
 * from the log; the log holds ciphertext and the replacements only.
 */
@Injectable()
export class PersonalData implements OnApplicationShutdown {
  private readonly logger = new Logger(PersonalData.name);
  private readonly options: ResolvedPersonalDataOptions;
  private readonly rules = new Map<string, ResolvedRule>();
  private readonly keys = new Map<string, SubjectKey>();
  private readonly hashes = new Map<string, string>();
  private readonly store: KeyStoreConnection;
  private master: Promise<Buffer> | null = null;
  private started = false;

  constructor(
    private readonly dataSource: DataSource,
    @Inject(LOG_MODULE_OPTIONS) logOptions: ResolvedLogOptions,
  ) {
    this.options = logOptions.personalData;
    this.store = new KeyStoreConnection(
      dataSource,
      this.options.keyStoreUrl,
      this.options.keyStoreSchema,
    );
    for (const [type, rule] of Object.entries(this.options.rules))
      this.rules.set(type, resolvePersonalDataRule(type, rule, `personalData.rules.${type}`));
  }

  /**
   * At start, after the migrations: loads the stored rules, makes the key store, checks the
   * master key when rules exist (production refuses to start without one), and reapplies
   * the erasure ledger. Called by the log's lifecycle.
   */
  async start(erasedSubjects: () => Promise<string[]>): Promise<void> {
    await this.loadRules();
    await this.store.create();
    if (this.rules.size > 0) await this.masterKey();
    const erased = await erasedSubjects();
    if (erased.length > 0) {
      const destroyed = await this.destroy(erased);
      this.logger.log(
        `Erasure ledger reapplied: ${erased.length} subjects erased, ${destroyed} keys destroyed again`,
      );
    }
    this.started = true;
  }

  /**
   * Loads the rules set over REST. The module's options (the server's rules file, `rules` in
   * code) win at start for the types they name. A rule stored for a type Ordinal writes itself
   * (taken over REST before such rules were refused) is left out with a warning: it would
   * refuse Ordinal's own appends (the StartMarker of every start).
   */
  async loadRules(): Promise<void> {
    const rows = await execute<RuleRow>(this.dataSource.manager, readRules());
    for (const row of rows) {
      if (isOrdinalMessageType(row.message_type))
        this.logger.warn(
          `Personal-data rule of ${row.message_type} left out: Ordinal writes that type itself, it takes no rule (delete its row of ${TABLES.personalDataRules})`,
        );
      else if (!Object.hasOwn(this.options.rules, row.message_type))
        this.rules.set(row.message_type, row.rule);
    }
  }

  /** The rule of a message type, if any. */
  ruleOf(messageType: string): ResolvedRule | undefined {
    return this.rules.get(messageType);
  }

  /**
   * Every rule, by message type: a map, so that a type named like an object's own property
   * (`toString`, `constructor`) is a type without a rule, not an inherited function.
   */
  allRules(): ReadonlyMap<string, ResolvedRule> {
    return this.rules;
  }

  /**
   * Sets the rule of a message type: `api` and `file` rules are stored (every process reads
   * them at start), `code` rules (`@DomainEvent(…, {personal})`) only held. Refused in
   * production without a master key.
   */
  async defineRule(messageType: string, raw: unknown, source: RuleSource): Promise<ResolvedRule> {
    const rule = resolvePersonalDataRule(messageType, raw, `rule of ${messageType}`);
    await this.masterKey();
    if (source !== 'code')
      await execute(this.dataSource.manager, upsertRule(messageType, rule, source));
    this.rules.set(messageType, rule);
    return rule;
  }

  /**
   * Declares a rule in code (`@DomainEvent(…, {personal})`): held by this process only, checked
   * now; the module's options and rules set over REST win for a type they name. A malformed
   * rule throws `InvalidPersonalDataRuleError` naming the type.
   */
  declareRule(messageType: string, raw: PersonalDataRule): void {
    const rule = resolvePersonalDataRule(
      messageType,
      raw,
      `@DomainEvent('${messageType}', {personal})`,
    );
    if (!this.rules.has(messageType)) this.rules.set(messageType, rule);
  }

  /** Whether any message of the append has a rule (the writer's fast path skips the rest). */
  applies(request: AppendRequest): boolean {
    if (this.rules.size === 0) return false;
    return request.messages.some((m) => this.rules.has(m.messageType));
  }

  /**
   * The append with each ruled message's personal fields sealed under its subject's key and
   * replaced in its body. Throws `InvalidMessageError` naming the subject pointer when a
   * message lacks it, `SubjectErasedError` when its subject was erased.
   */
  async seal(request: AppendRequest): Promise<AppendRequest> {
    const plans: ((SealPlan & { rule: ResolvedRule; subject: string }) | null)[] = [];
    const count = request.messages.length;
    for (const [i, message] of request.messages.entries()) {
      const rule = this.rules.get(message.messageType);
      if (!rule) {
        plans.push(null);
        continue;
      }
      const where = count > 1 ? `messages.${i}: ` : '';
      const plan = planSeal(rule, message.messageType, message.body);
      if ('problem' in plan) throw new InvalidMessageError(`${where}${plan.message}`);
      plans.push({ rule, ...plan, subject: this.hashOf(plan.subjectId, request.tenant) });
    }
    const subjects = [...new Set(plans.flatMap((p) => (p ? [p.subject] : [])))];
    const tenant = request.tenant;
    // A deleted tenant's subjects get no key (docs/tenants.md#deleting-a-tenant).
    if (tenant !== undefined && this.deletedTenants.has(tenant))
      throw new TenantDeletedError(tenant);
    const keys = await this.keysOf(subjects, true);
    // A key destroyed with its tenant (another process deleted it): the tenant's error, not the
    // subject's (one query, only then).
    const erasedWith =
      tenant !== undefined && [...keys.values()].some((k) => k === 'erased')
        ? await this.deletedAmong([tenant])
        : new Set<string>();
    const messages = request.messages.map((message, i): NewMessage => {
      const plan = plans[i];
      if (!plan) return message;
      const key = keys.get(plan.subject);
      if (key === undefined || key === 'erased') {
        if (tenant !== undefined && erasedWith.has(tenant)) throw new TenantDeletedError(tenant);
        throw new SubjectErasedError(message.messageType, plan.rule.subject);
      }
      const { fields, values } = plan;
      if (fields.length === 0) return { ...message, body: plan.body };
      // One box for all the message's fields (one cipher operation, not one per field), bound
      // to the subject and the pointers.
      const sealed = seal(
        key,
        Buffer.from(JSON.stringify(values)),
        fieldContext(plan.subject, fields.join(',')),
      ).toString('base64');
      return { ...message, body: plan.body, personal: { subject: plan.subject, fields, sealed } };
    });
    return { ...request, messages };
  }

  /**
   * `subjectHash` of a subject id, remembered (a subject publishes many messages; a SHA-256
   * each cost a sixth of the sealing). Only the id's name in the key store: no key.
   */
  private hashOf(subjectId: string, tenant?: string): string {
    // A tenant's subject is its own (`tenantSubjectHash`). A tenant id holds no NUL: the two
    // kinds of entry never meet.
    const name = tenant === undefined ? `\u0000${subjectId}` : `${tenant}\u0000${subjectId}`;
    let hash = this.hashes.get(name);
    if (hash === undefined) {
      if (this.hashes.size >= KEY_CACHE_SIZE) this.hashes.clear();
      this.hashes.set(name, (hash = subjectHash(subjectId, tenant)));
    }
    return hash;
  }

  /** Tenants this process knows to be deleted (their keys destroyed, none made again here). */
  private readonly deletedTenants = new Set<string>();

  /** Which of these tenants are deleted (`deleted_tenants`, in the log's database). */
  private async deletedAmong(tenants: string[]): Promise<Set<string>> {
    const rows = await this.dataSource.query<{ tenant: string }[]>(
      `SELECT tenant FROM ${TABLES.deletedTenants} WHERE tenant = ANY($1::text[])`,
      [tenants],
    );
    return new Set(rows.map((r) => r.tenant));
  }

  /**
   * Destroys every key of a deleted tenant's subjects (docs/tenants.md#deleting-a-tenant): in
   * the key store (rows kept, keys NULL) and in this process's memory, which also makes no key
   * for the tenant again. Returns how many keys it destroyed now (0 when they were already).
   */
  async destroyTenant(tenant: string): Promise<number> {
    this.forgetTenant(tenant);
    const rows = await this.store.query(destroyTenantKeys(this.options.keyStoreSchema, tenant));
    return rows.length;
  }

  /**
   * Destroys again the keys of every deleted tenant (`deleted_tenants` is their ledger): at
   * start, and with the erasure ledger's reapply. Returns the tenants and the keys destroyed.
   */
  async reapplyDeletedTenants(): Promise<{ tenants: number; keys: number }> {
    const rows = await this.dataSource.query<{ tenant: string }[]>(
      `SELECT tenant FROM ${TABLES.deletedTenants}`,
    );
    let keys = 0;
    for (const { tenant } of rows) keys += await this.destroyTenant(tenant);
    return { tenants: rows.length, keys };
  }

  /** Drops a deleted tenant's keys from this process's memory (a deletion made elsewhere). */
  forgetTenant(tenant: string): void {
    this.deletedTenants.add(tenant);
    const prefix = `${tenant}/`;
    for (const subject of this.keys.keys())
      if (subject.startsWith(prefix)) this.keys.set(subject, 'erased');
  }

  /**
   * Stored rows of a ruled type as an append under today's rule would have stored them
   * (docs/personal-data.md#legacy-data-in-clear): each one's clear personal fields sealed under
   * its subject's key (made when the subject has none), the replacements in its body. An
   * erased subject gets no key: its fields are replaced and sealed under a throwaway key.
   * Throws `NoPersonalDataRuleError` when the type has no rule.
   */
  async sealStored(messageType: string, rows: StoredRow[]): Promise<StoredSeal[]> {
    const rule = this.rules.get(messageType);
    if (!rule) throw new NoPersonalDataRuleError(messageType);
    const planned = rows.map((row) => planStoredSeal(rule, messageType, row));
    const subjects = [
      ...new Set(planned.flatMap((p) => (p.outcome === 'plan' ? [p.subject] : []))),
    ];
    const keys =
      subjects.length > 0 ? await this.keysOf(subjects, true) : new Map<string, SubjectKey>();
    return planned.map((p, i) => {
      if (p.outcome !== 'plan') return p;
      const key = keys.get(p.subject);
      if (key === undefined) throw new Error(`No key was read or made for subject ${p.subject}`);
      return finishStoredSeal(p, rows[i], key);
    });
  }

  /**
   * The messages as a reader with the `personal` scope gets them: each sealed field back in
   * clear, `redacted` left with what cannot be opened (an erased subject's fields). Messages
   * without personal fields are returned as they are (the same objects).
   */
  async reveal<M extends StoredMessage>(messages: M[]): Promise<(M | StoredMessage)[]> {
    const subjects = [
      ...new Set(messages.flatMap((m) => (m.personal ? [m.personal.subject] : []))),
    ];
    if (subjects.length === 0) return messages;
    const keys = await this.keysOf(subjects, false);
    return messages.map((m) =>
      m.personal ? this.opened(m, m.personal, keys.get(m.personal.subject)) : m,
    );
  }

  /**
   * Reads into memory, in one key-store query, the keys of the messages' subjects that are not
   * there yet (a catch-up page, before its messages are revealed one by one with
   * `revealCached`). Erased subjects stay erased: a key is only ever used through the memory
   * an erasure clears first.
   */
  async loadKeys(messages: readonly StoredMessage[]): Promise<void> {
    const subjects = new Set<string>();
    for (const m of messages)
      if (m.personal && !this.keys.has(m.personal.subject)) subjects.add(m.personal.subject);
    if (subjects.size > 0) await this.keysOf([...subjects], false);
  }

  /** `reveal` of one message. */
  async revealOne(message: StoredMessage): Promise<StoredMessage> {
    if (!message.personal) return message;
    return this.revealCached(message) ?? (await this.reveal([message]))[0];
  }

  /**
   * `reveal` of one message when its subject's key is in memory (a stream's hot path: no
   * promise per message), else undefined.
   */
  revealCached(message: StoredMessage): StoredMessage | undefined {
    if (!message.personal) return message;
    const key = this.keys.get(message.personal.subject);
    return key === undefined ? undefined : this.opened(message, message.personal, key);
  }

  private opened(
    message: StoredMessage,
    personal: SealedFields,
    key: SubjectKey | undefined,
  ): StoredMessage {
    if (key === undefined || key === 'erased') return message;
    const json = renderedJson(message);
    if (json !== undefined)
      // A rendered read: the fields opened into its JSON, `redacted` dropped (the wire shape).
      return new RenderedMessage(
        { index: message.id, message_type: message.messageType, user_id: message.userId, json: '' },
        this.openedJson(json, personal, key, `Message ${message.id}`) ?? json,
      );
    const body = this.openBody(message.body, personal, key, `Message ${message.id}`);
    const copy: Record<string, unknown> = {};
    for (const name of NAMES) copy[name] = message[name];
    return { ...copy, body, redacted: null } as StoredMessage;
  }

  /**
   * Messages as JSON text (a consumer group's deliveries) for a reader with the `personal`
   * scope: each one's sealed fields opened in its JSON, `redacted` dropped; tombstones and
   * erased subjects' messages unchanged.
   */
  async revealJson<E extends { json: string; personal?: SealedFields; index?: number }>(
    events: E[],
  ): Promise<E[]> {
    const subjects = [...new Set(events.flatMap((e) => (e.personal ? [e.personal.subject] : [])))];
    if (subjects.length === 0) return events;
    const keys = await this.keysOf(subjects, false);
    return events.map((e) => {
      const key = e.personal ? keys.get(e.personal.subject) : undefined;
      if (!e.personal || key === undefined || key === 'erased') return e;
      const json = this.openedJson(e.json, e.personal, key, `Message ${e.index ?? ''}`.trim());
      return json === null ? e : { ...e, json };
    });
  }

  /**
   * A message's JSON text (the wire record) with its sealed fields opened in its body and
   * `redacted` dropped; null for a tombstone's. The clear values are spliced into the text
   * (json-splice.ts): the message is not parsed and written back whole, which cost as much as
   * the AES-GCM open. Text the splice cannot walk goes the long way, parse and stringify.
   */
  private openedJson(
    json: string,
    personal: SealedFields,
    key: Buffer,
    what: string,
  ): string | null {
    let parts: MessageTextParts | null;
    try {
      parts = messageTextParts(json);
    } catch {
      parts = null;
    }
    if (parts?.tombstone) return null;
    const clear = this.openBox(personal, key, what);
    if (parts !== null) {
      try {
        const spliced = spliceClear(json, parts, personal.fields, clear);
        if (spliced !== null) return spliced;
      } catch {
        // Text the scanner cannot walk: the long way below.
      }
    }
    const wire = JSON.parse(json) as { body: unknown; redacted?: string[]; tombstone?: unknown };
    if (wire.tombstone !== undefined) return null;
    const values = JSON.parse(clear) as unknown[];
    personal.fields.forEach((pointer, i) => replaceAt(wire.body, pointer, values[i]));
    delete wire.redacted;
    return JSON.stringify(wire);
  }

  /**
   * Stream events (`data` their body) as the framework's domain code and a reader with the
   * `personal` scope get them: each sealed field in clear and no `redacted` (a stored event's
   * `redacted` names the replacements it holds), or, once its subject was erased, the
   * replacement with `redacted` set.
   */
  async revealEvents<E extends { data: unknown; personal?: SealedFields; redacted?: string[] }>(
    events: E[],
  ): Promise<E[]> {
    const subjects = [...new Set(events.flatMap((e) => (e.personal ? [e.personal.subject] : [])))];
    if (subjects.length === 0) return events;
    const keys = await this.keysOf(subjects, false);
    return events.map((e) => {
      if (!e.personal) return e;
      const { personal, redacted: _stored, ...rest } = e;
      const key = keys.get(personal.subject);
      if (key === undefined || key === 'erased') return { ...rest, redacted: personal.fields } as E;
      return { ...rest, data: this.openBody(e.data, personal, key, 'Stream event') } as E;
    });
  }

  /** A copy of `body` with the sealed fields opened; a box that does not open is a typed error. */
  private openBody(body: unknown, personal: SealedFields, key: Buffer, what: string): unknown {
    const opened = structuredClone(body);
    this.openInPlace(opened, personal, key, what);
    return opened;
  }

  /** Opens the sealed fields into `opened` (in place). */
  private openInPlace(opened: unknown, personal: SealedFields, key: Buffer, what: string): void {
    const values = JSON.parse(this.openBox(personal, key, what)) as unknown[];
    personal.fields.forEach((pointer, i) => replaceAt(opened, pointer, values[i]));
  }

  /** The JSON text of the array of a message's sealed values; a box that does not open is a typed error. */
  private openBox(personal: SealedFields, key: Buffer, what: string): string {
    try {
      return openBase64(key, personal.sealed, this.contextOf(personal, key)).toString('utf8');
    } catch (cause) {
      throw new OrdinalError(
        'master_key_mismatch',
        `${what}: its personal fields ${personal.fields.join(', ')} do not open under their subject's key (AES-GCM refused them); nothing is shown in their place`,
        { cause },
      );
    }
  }

  /**
   * The bytes of a box's context (`fieldContext`), kept per subject: a catch-up opens many boxes
   * of each subject, all of one type's fields, and building the text and its bytes again for
   * each cost a tenth of the open. Kept beside the subject's key (a key is one subject's, and
   * looking up an object costs less than hashing the subject's name again); they go with it.
   * Only names and pointers: nothing secret.
   */
  private contextOf(personal: SealedFields, key: Buffer): Buffer {
    const known = this.contexts.get(key);
    if (
      known !== undefined &&
      known.subject === personal.subject &&
      sameFields(known.fields, personal.fields)
    )
      return known.bytes;
    const bytes = Buffer.from(fieldContext(personal.subject, personal.fields.join(',')), 'utf8');
    this.contexts.set(key, { subject: personal.subject, fields: personal.fields, bytes });
    return bytes;
  }

  private readonly contexts = new WeakMap<
    Buffer,
    { subject: string; fields: readonly string[]; bytes: Buffer }
  >();

  /** Drops an erased subject's key from this process's memory (an erasure made elsewhere). */
  forget(subject: string): void {
    this.keys.set(subject, 'erased');
  }

  /**
   * Destroys the keys of these subjects (hashes): in the key store (a row kept with no key, so
   * none is ever made again) and in this process's memory. Returns how many rows were written.
   */
  async destroy(subjects: string[]): Promise<number> {
    for (const s of subjects) this.keys.set(s, 'erased');
    let written = 0;
    for (let i = 0; i < subjects.length; i += 10_000) {
      const rows = await this.store.query(
        destroyKeys(this.options.keyStoreSchema, subjects.slice(i, i + 10_000)),
      );
      written += rows.length;
    }
    return written;
  }

  /**
   * The data keys of these subjects (hashes); with `create`, made for those that have none.
   * Memory first; the rest is read (and made) together with what every other append and
   * reader asked for in the same turn of the event loop: one or two key-store queries for all
   * of them, so 32 concurrent publishes of new subjects cost no more round trips than one.
   */
  private async keysOf(subjects: string[], create: boolean): Promise<Map<string, SubjectKey>> {
    const found = new Map<string, SubjectKey>();
    const missing: string[] = [];
    for (const s of subjects) {
      const known = this.keys.get(s);
      if (known === undefined) missing.push(s);
      else found.set(s, known);
    }
    if (missing.length === 0) return found;
    const loaded = await new Promise<Map<string, SubjectKey>>((resolve, reject) => {
      this.keyRequests.push({ subjects: missing, create, resolve, reject });
      if (this.keyRequests.length === 1) setImmediate(() => void this.loadRequestedKeys());
    });
    for (const s of missing) {
      const key = loaded.get(s);
      if (key !== undefined) found.set(s, key);
    }
    return found;
  }

  private readonly keyRequests: {
    subjects: string[];
    create: boolean;
    resolve: (keys: Map<string, SubjectKey>) => void;
    reject: (error: unknown) => void;
  }[] = [];

  /** Reads (and makes) the keys every queued request asked for, in one pass. */
  private async loadRequestedKeys(): Promise<void> {
    const requests = this.keyRequests.splice(0);
    const wanted = new Set<string>();
    const toMake = new Set<string>();
    for (const r of requests)
      for (const s of r.subjects) {
        wanted.add(s);
        if (r.create) toMake.add(s);
      }
    try {
      const keys = await this.readKeys([...wanted], toMake);
      for (const r of requests) r.resolve(keys);
    } catch (error) {
      for (const r of requests) r.reject(error);
    }
  }

  private async readKeys(
    subjects: string[],
    toMake: Set<string>,
  ): Promise<Map<string, SubjectKey>> {
    const schema = this.options.keyStoreSchema;
    const master = await this.masterKey();
    // Subjects an append names are not looked up first: the insert of their new keys answers
    // with the rows that exist already (a destroyed one too), one round trip instead of two on
    // a publish of new subjects. A key made for a subject that had one is dropped unused.
    const toRead = subjects.filter((s) => !toMake.has(s));
    let rows =
      toRead.length > 0 ? await this.store.query<SubjectKeyRow>(readKeys(schema, toRead)) : [];
    const fresh = subjects.filter((s) => toMake.has(s));
    // The keys made here, by subject: the row this process wrote is not unwrapped again.
    const made = new Map<string, { key: Buffer; wrapped: Buffer }>();
    if (fresh.length > 0) {
      const newKeys = newDataKeys(fresh.length);
      const wrapped = fresh.map((s, i) => {
        const key = newKeys[i];
        const box = seal(master, key, keyContext(s));
        made.set(s, { key, wrapped: box });
        return box;
      });
      rows = rows.concat(await this.store.query<SubjectKeyRow>(createKeys(schema, fresh, wrapped)));
      const returned = new Set(rows.map((r) => r.subject_hash));
      const raced = fresh.filter((s) => !returned.has(s));
      // A key another process made after this statement's snapshot: read it now.
      if (raced.length > 0)
        rows = rows.concat(await this.store.query<SubjectKeyRow>(readKeys(schema, raced)));
    }
    const keys = new Map<string, SubjectKey>();
    for (const row of rows) {
      // An erasure in this process while the query ran wins over the key it read, and so does
      // the deletion of the subject's tenant.
      const erased =
        row.wrapped_key === null ||
        this.keys.get(row.subject_hash) === 'erased' ||
        this.ofDeletedTenant(row.subject_hash);
      const ours = made.get(row.subject_hash);
      const key = erased
        ? 'erased'
        : ours !== undefined && ours.wrapped.equals(row.wrapped_key!)
          ? ours.key
          : this.unwrap(master, row);
      keys.set(row.subject_hash, key);
      this.remember(row.subject_hash, key);
    }
    return keys;
  }

  /** Whether a subject's name is a tenant's this process knows to be deleted. */
  private ofDeletedTenant(subject: string): boolean {
    if (this.deletedTenants.size === 0) return false;
    const slash = subject.indexOf('/');
    return slash > 0 && this.deletedTenants.has(subject.slice(0, slash));
  }

  private unwrap(master: Buffer, row: SubjectKeyRow): Buffer {
    try {
      return open(master, row.wrapped_key!, keyContext(row.subject_hash));
    } catch (cause) {
      throw new MasterKeyMismatchError({ cause });
    }
  }

  private remember(subject: string, key: SubjectKey): void {
    if (this.keys.size >= KEY_CACHE_SIZE) this.keys.delete(this.keys.keys().next().value!);
    this.keys.set(subject, key);
    if (key !== 'erased' && this.firstKeyListener !== null) {
      const listener = this.firstKeyListener;
      this.firstKeyListener = null;
      listener();
    }
  }

  private firstKeyListener: (() => void) | null = null;

  /**
   * Calls `listener` once, when this process first keeps a subject's key in memory (before
   * that, an erasure made elsewhere has nothing here to drop): `ErasureWatch` starts following
   * the markers then, so a process that never touches personal data holds no feed.
   */
  onFirstKey(listener: () => void): void {
    this.firstKeyListener = listener;
  }

  /** Drops the subjects' keys kept in memory (erasures stay known): the next use reads the key store again. */
  forgetKeys(): void {
    for (const [subject, key] of this.keys) if (key !== 'erased') this.keys.delete(subject);
  }

  /**
   * The master key, checked once against the store's check value (the first key the store saw
   * made it): a wrong key fails here with `MasterKeyMismatchError`, never later with garbage.
   */
  masterKey(): Promise<Buffer> {
    return (this.master ??= this.loadMasterKey().catch((error: unknown) => {
      this.master = null;
      throw error;
    }));
  }

  private async loadMasterKey(): Promise<Buffer> {
    let key: Buffer;
    if (this.options.keyConfigured) key = await this.options.keyProvider.masterKey();
    else if (this.options.production)
      throw new OrdinalError(
        'invalid_configuration',
        'Personal-data rules exist but no master key is configured: set ORDINAL_MASTER_KEY (32 random bytes, base64: `openssl rand -base64 32`) or a KeyProvider; production refuses to seal personal data without one',
      );
    else {
      this.logger.warn(
        'Personal-data rules exist but ORDINAL_MASTER_KEY is not set: using the development master key, which protects nothing (production refuses to start this way)',
      );
      key = DEVELOPMENT_KEY;
    }
    const [row] = await this.store.query<{ sealed: Buffer }>(
      ensureCheck(
        this.options.keyStoreSchema,
        seal(key, Buffer.from(CHECK_CONTEXT), CHECK_CONTEXT),
      ),
    );
    try {
      open(key, row.sealed, CHECK_CONTEXT);
    } catch (cause) {
      throw new MasterKeyMismatchError({ cause });
    }
    return key;
  }

  /** Whether `start` ran (the writer refuses ruled appends before). */
  get ready(): boolean {
    return this.started;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.store.close();
  }
}
