/** A feed the budget may drop (an SSE stream: it is closed and its client resumes from its bookmark). */
export interface BudgetHolder {
  drop(): void;
}

interface HeldPage {
  bytes: number;
  holders: Set<BudgetHolder>;
}

/**
 * The bytes of catch-up pages that droppable feeds hold, against one bound for all of them. A
 * page is known by its first message (feeds sharing a read share its message objects, even
 * when one's copy is cut shorter) and counted once however many feeds hold it. When the total
 * goes over `limit`, the holder with the largest share (each page's bytes split between its
 * holders) is dropped: its pages are released and its `drop()` called, until the total is
 * within the bound again. A feed's own bound is kept by the size of its pages, not here.
 */
export class PageBudget {
  private readonly pages = new Map<object, HeldPage>();
  private readonly byHolder = new Map<BudgetHolder, Set<object>>();
  private total = 0;
  /** Holders dropped so far. */
  dropped = 0;

  constructor(private readonly limit: number) {}

  /** Bytes of all pages held now. */
  get bytes(): number {
    return this.total;
  }

  /** `holder` holds the page whose first message is `page`; may drop holders (this one too). */
  hold(holder: BudgetHolder, page: object, bytes: number): void {
    let held = this.pages.get(page);
    if (held === undefined) {
      held = { bytes, holders: new Set() };
      this.pages.set(page, held);
      this.total += bytes;
    } else if (bytes > held.bytes) {
      this.total += bytes - held.bytes;
      held.bytes = bytes;
    }
    if (held.holders.has(holder)) return;
    held.holders.add(holder);
    let mine = this.byHolder.get(holder);
    if (mine === undefined) this.byHolder.set(holder, (mine = new Set()));
    mine.add(page);
    if (this.total > this.limit) this.shed();
  }

  /** `holder` is done with the page. */
  release(holder: BudgetHolder, page: object): void {
    const held = this.pages.get(page);
    if (held === undefined || !held.holders.delete(holder)) return;
    const mine = this.byHolder.get(holder);
    mine?.delete(page);
    if (mine?.size === 0) this.byHolder.delete(holder);
    if (held.holders.size === 0) {
      this.pages.delete(page);
      this.total -= held.bytes;
    }
  }

  /** `holder` is done with every page (closed). */
  releaseAll(holder: BudgetHolder): void {
    for (const page of [...(this.byHolder.get(holder) ?? [])]) this.release(holder, page);
  }

  private shed(): void {
    while (this.total > this.limit) {
      let worst: BudgetHolder | null = null;
      let most = 0;
      for (const [holder, pages] of this.byHolder) {
        let share = 0;
        for (const page of pages) {
          const held = this.pages.get(page)!;
          share += held.bytes / held.holders.size;
        }
        if (share > most) {
          most = share;
          worst = holder;
        }
      }
      if (worst === null) return;
      this.releaseAll(worst);
      this.dropped++;
      worst.drop();
    }
  }
}
