import type { INestApplicationContext } from '@nestjs/common';
import { StreamDeletedError, VersionConflictError } from '@ordinal/log';
import { createTestDatabase, type TestDatabase } from '@ordinal/test-support/test-database';
import { startEventStoreContext } from '@ordinal/test-support/event-store-context';
import { Aggregate } from './aggregate.decorator.js';
import { AggregateRoot } from './aggregate-root.js';
import type { AggregateRepository } from './aggregate-repository.js';
import { aggregateRepositoryToken } from './aggregate-repository.token.js';
import { DomainEvent } from '../events/domain-event.decorator.js';
import { AggregateNotFoundError, InvalidAggregateError } from '../errors/index.js';

@DomainEvent('LedgerOpened')
class LedgerOpened {
  constructor(readonly owner: string) {}
}

@DomainEvent('LedgerPosted')
class LedgerPosted {
  constructor(readonly amount: number) {}
}

@Aggregate({ events: [LedgerOpened, LedgerPosted] })
class Ledger extends AggregateRoot {
  owner = '';
  amounts: number[] = [];
  /** Events applied since construction: not part of the snapshot, tells what a load replayed. */
  replayed = 0;

  open(owner: string): void {
    this.apply(new LedgerOpened(owner));
  }

  post(amount: number): void {
    this.apply(new LedgerPosted(amount));
  }

  onLedgerOpened(event: LedgerOpened): void {
    this.owner = event.owner;
    this.replayed += 1;
  }

  onLedgerPosted(event: LedgerPosted): void {
    this.amounts.push(event.amount);
    this.replayed += 1;
  }

  override toSnapshot(): unknown {
    return { owner: this.owner, amounts: this.amounts };
  }
}

// Both orderings, as the repository's own spec: each has its own append path for a stream with
// an expected version.
describe.each(['gapless', 'concurrent'] as const)(
  'AggregateRepository.forTenant: aggregates of two tenants (docs/tenants.md), %s mode',
  (ordering) => {
    let db: TestDatabase;
    let app: INestApplicationContext;
    let ledgers: AggregateRepository<Ledger>;
    let acme: AggregateRepository<Ledger>;
    let globex: AggregateRepository<Ledger>;

    beforeAll(async () => {
      db = await createTestDatabase();
      app = await startEventStoreContext(db.url, { aggregates: [Ledger], log: { ordering } });
      ledgers = app.get(aggregateRepositoryToken(Ledger));
      acme = ledgers.forTenant('acme');
      globex = ledgers.forTenant('globex');
    });
    afterAll(async () => {
      await app?.close();
      await db?.drop();
    });

    /** A saved ledger of `repository`'s tenant: opened by `owner`, then `amounts` posted. */
    async function given(
      repository: AggregateRepository<Ledger>,
      id: string,
      owner: string,
      ...amounts: number[]
    ): Promise<Ledger> {
      const ledger = repository.create(id);
      ledger.open(owner);
      for (const amount of amounts) ledger.post(amount);
      await repository.save(ledger);
      return ledger;
    }

    it('is a view of the injected repository, which is unchanged', async () => {
      expect(ledgers.tenant).toBeNull();
      expect(ledgers.forTenant(undefined)).toBe(ledgers);
      expect(acme.forTenant(null)).toBe(ledgers);
      expect(acme.tenant).toBe('acme');
      expect(acme.forTenant('globex').tenant).toBe('globex');
      expect(acme.aggregate).toBe(Ledger);
      // The repository of no tenant works as before: its aggregates have no tenant
      const plain = await given(ledgers, 'ledger-0', 'nobody', 1);
      expect(plain.tenant).toBeNull();
      const loaded = await ledgers.load('ledger-0');
      expect(loaded).toMatchObject({ owner: 'nobody', amounts: [1], version: 2, tenant: null });
      const [row] = await db.query<{ stream_id: string; tenant: string | null }>(
        `SELECT stream_id, tenant FROM messages WHERE stream_id = 'ledger-0' LIMIT 1`,
      );
      expect(row).toEqual({ stream_id: 'ledger-0', tenant: null });
    });

    it('keeps two tenants’ aggregates of one id apart, each knowing its tenant', async () => {
      // Given acme's ledger-1 with two postings and globex's with one
      const a = await given(acme, 'ledger-1', 'ann', 5, 6);
      const g = await given(globex, 'ledger-1', 'gus', 7);
      expect([a.tenant, a.version]).toEqual(['acme', 3]);
      expect([g.tenant, g.version]).toEqual(['globex', 2]);
      // When each is loaded through its tenant's repository
      const [loadedA, loadedG] = await Promise.all([
        acme.load('ledger-1'),
        globex.load('ledger-1'),
      ]);
      // Then each is its own, with its tenant and plain id
      expect(loadedA).toMatchObject({ id: 'ledger-1', tenant: 'acme', owner: 'ann', version: 3 });
      expect(loadedA.amounts).toEqual([5, 6]);
      expect(loadedG).toMatchObject({ id: 'ledger-1', tenant: 'globex', owner: 'gus', version: 2 });
      expect(loadedG.amounts).toEqual([7]);
      // And the repository of no tenant has no ledger-1
      expect(await ledgers.find('ledger-1')).toBeNull();
      // And the rows are the tenants', qualified
      const rows = await db.query<{ stream_id: string; tenant: string; n: string }>(
        `SELECT stream_id, tenant, count(*)::text AS n FROM messages
          WHERE stream_id LIKE '%ledger-1' GROUP BY stream_id, tenant ORDER BY stream_id`,
      );
      expect(rows).toEqual([
        { stream_id: 'acme/ledger-1', tenant: 'acme', n: '3' },
        { stream_id: 'globex/ledger-1', tenant: 'globex', n: '2' },
      ]);
    });

    it("does not find a tenant's aggregate through another tenant's repository", async () => {
      // Given acme's ledger-2 only
      await given(acme, 'ledger-2', 'ann', 1);
      // Then globex's repository does not find it, and its error names the plain id
      expect(await globex.find('ledger-2')).toBeNull();
      const error = await globex.load('ledger-2').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AggregateNotFoundError);
      expect((error as Error).message).toContain('ledger-2');
      expect((error as Error).message).not.toContain('acme');
      await expect(globex.update('ledger-2', (l) => l.post(2))).rejects.toBeInstanceOf(
        AggregateNotFoundError,
      );
      // And the repository of no tenant does not either
      await expect(ledgers.load('ledger-2')).rejects.toBeInstanceOf(AggregateNotFoundError);
      // And acme's is untouched
      expect((await acme.load('ledger-2')).amounts).toEqual([1]);
    });

    it('checks versions per tenant: a stale save conflicts in its tenant only', async () => {
      // Given both tenants' ledger-3, each loaded twice
      await given(acme, 'ledger-3', 'ann');
      await given(globex, 'ledger-3', 'gus');
      const [a1, a2, g1] = await Promise.all([
        acme.load('ledger-3'),
        acme.load('ledger-3'),
        globex.load('ledger-3'),
      ]);
      // When one acme copy saves, then the other, and globex's
      a1.post(1);
      await acme.save(a1);
      a2.post(2);
      g1.post(3);
      await expect(acme.save(a2)).rejects.toBeInstanceOf(VersionConflictError);
      // Then globex's save (same id, same loaded version) is no conflict
      await expect(globex.save(g1)).resolves.toMatchObject({ streamId: 'ledger-3', version: 2 });
      // And update retries within its tenant
      const updated = await acme.update('ledger-3', (l) => l.post(4));
      expect(updated).toMatchObject({ tenant: 'acme', version: 3, amounts: [1, 4] });
      expect((await globex.load('ledger-3')).amounts).toEqual([3]);
    });

    it('saves no aggregate of another tenant, and adopts a new one of none', async () => {
      // Given acme's ledger-4
      const a = await given(acme, 'ledger-4', 'ann');
      a.post(1);
      // When it is saved through globex's repository, or through the one of no tenant
      const error = await globex.save(a).catch((e: unknown) => e);
      // Then that is refused, naming where to save it, and nothing is written anywhere
      expect(error).toBeInstanceOf(InvalidAggregateError);
      expect((error as Error).message).toContain("forTenant('acme')");
      await expect(ledgers.save(a)).rejects.toBeInstanceOf(InvalidAggregateError);
      await expect(globex.saveSnapshot(a)).rejects.toBeInstanceOf(InvalidAggregateError);
      expect(await globex.find('ledger-4')).toBeNull();
      expect(await ledgers.find('ledger-4')).toBeNull();
      expect((await acme.load('ledger-4')).version).toBe(1);
      // And a new aggregate constructed directly becomes the tenant's when it saves it
      const fresh = new Ledger('ledger-5');
      fresh.open('new');
      await globex.save(fresh);
      expect(fresh.tenant).toBe('globex');
      expect((await globex.load('ledger-5')).owner).toBe('new');
      expect(await acme.find('ledger-5')).toBeNull();
      // But a loaded aggregate of no tenant is not adopted
      const plain = await given(ledgers, 'ledger-6', 'nobody');
      plain.post(1);
      await expect(acme.save(plain)).rejects.toBeInstanceOf(InvalidAggregateError);
    });

    it("snapshots a tenant's aggregate for that tenant only", async () => {
      // Given both tenants' ledger-7 with three postings, and a snapshot of acme's
      await given(acme, 'ledger-7', 'ann', 1, 2, 3);
      await given(globex, 'ledger-7', 'gus', 4, 5, 6);
      const saved = await acme.saveSnapshot(await acme.load('ledger-7'));
      expect(saved.version).toBe(4);
      // When both are loaded after one more posting
      await acme.update('ledger-7', (l) => l.post(7));
      const [a, g] = await Promise.all([acme.load('ledger-7'), globex.load('ledger-7')]);
      // Then acme's starts from its snapshot, globex's replays every event
      expect(a).toMatchObject({ tenant: 'acme', owner: 'ann', amounts: [1, 2, 3, 7], replayed: 1 });
      expect(g).toMatchObject({ tenant: 'globex', owner: 'gus', amounts: [4, 5, 6], replayed: 4 });
      // And the stored snapshot is acme's, without its tenant in the state
      const rows = await db.query<{ stream_id: string; state: unknown }>(
        `SELECT stream_id, state FROM snapshots WHERE stream_id LIKE '%ledger-7'`,
      );
      expect(rows).toEqual([
        { stream_id: 'acme/ledger-7', state: { owner: 'ann', amounts: [1, 2, 3] } },
      ]);
    });

    it("deletes one tenant's aggregate and leaves the other's", async () => {
      // Given both tenants' ledger-8
      await given(acme, 'ledger-8', 'ann', 1);
      await given(globex, 'ledger-8', 'gus', 2);
      // When acme's is deleted
      const deleted = await acme.delete('ledger-8', { expectedVersion: 2 });
      expect(deleted).toMatchObject({ streamId: 'ledger-8', tenant: 'acme', lastVersion: 2 });
      // Then acme's load says deleted (by its plain id), globex's loads as it was
      const error = await acme.load('ledger-8').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StreamDeletedError);
      expect((error as Error).message).not.toContain('acme/');
      expect(await globex.load('ledger-8')).toMatchObject({ amounts: [2], version: 2 });
      // And acme's created again goes on after its deleted versions
      const again = await given(acme, 'ledger-8', 'anew');
      expect(again.version).toBe(3);
      expect(await acme.load('ledger-8')).toMatchObject({ owner: 'anew', amounts: [] });
    });
  },
);
