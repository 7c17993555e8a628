import fc from 'fast-check';
import { planGroup, type GroupView } from './ownership-plan.js';

const names = (n: number) => Array.from({ length: n }, (_, i) => `p#${i}`);

describe('planGroup (sharing a group among live processes)', () => {
  it('a single consumer stays with its owner while it lives, whoever joins', () => {
    // Given b owns the one consumer and a (lower id) joins
    const view: GroupView = {
      names: ['x'],
      owners: new Map([['x', 'b']]),
      members: ['a', 'b'],
      me: 'a',
    };
    // Then a claims nothing and b keeps it
    expect(planGroup(view)).toEqual({ claim: [], release: [], quota: 0 });
    expect(planGroup({ ...view, me: 'b' })).toEqual({ claim: [], release: [], quota: 1 });
  });

  it('a free consumer is claimed by exactly one member (the first by id when nobody holds anything)', () => {
    const view: GroupView = { names: ['x'], owners: new Map(), members: ['b', 'a', 'c'], me: 'a' };
    expect(planGroup(view).claim).toEqual(['x']);
    expect(planGroup({ ...view, me: 'b' }).claim).toEqual([]);
    expect(planGroup({ ...view, me: 'c' }).claim).toEqual([]);
  });

  it('a joining process gets a share: 4+4 of 8 become 3+3+2', () => {
    const owners = new Map(names(8).map((n, i) => [n, i < 4 ? 'a' : 'b']));
    const view: GroupView = { names: names(8), owners, members: ['a', 'b', 'c'], me: 'a' };
    expect(planGroup(view)).toEqual({ claim: [], release: ['p#3'], quota: 3 });
    expect(planGroup({ ...view, me: 'b' })).toEqual({ claim: [], release: ['p#7'], quota: 3 });
    // Once released, c claims the two freed
    owners.delete('p#3');
    owners.delete('p#7');
    expect(planGroup({ ...view, owners, me: 'c' })).toEqual({
      claim: ['p#3', 'p#7'],
      release: [],
      quota: 2,
    });
  });

  it("a dead process's consumers are shared by the survivors", () => {
    const owners = new Map(
      names(8)
        .filter((_, i) => i % 3 !== 2)
        .map((n, i) => [n, i % 2 === 0 ? 'a' : 'b']),
    );
    const plans = ['a', 'b'].map((me) =>
      planGroup({ names: names(8), owners, members: ['a', 'b'], me }),
    );
    expect(plans.map((p) => p.quota)).toEqual([4, 4]);
    const claimed = plans.flatMap((p) => p.claim);
    expect(new Set(claimed).size).toBeLessThanOrEqual(claimed.length);
    for (const name of claimed) expect(owners.has(name)).toBe(false);
  });

  it('property: quotas add up to the group, claims are free consumers, releases are own ones', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 16 }),
        fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { minLength: 1 }),
        fc.array(fc.option(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'dead'), { nil: undefined }), {
          maxLength: 16,
        }),
        (n, members, assignment) => {
          const all = names(n);
          const owners = new Map<string, string>();
          all.forEach((name, i) => {
            const owner = assignment[i];
            if (owner !== undefined && ((members as string[]).includes(owner) || owner === 'dead'))
              owners.set(name, owner);
          });
          const live = members;
          const plans = live.map((me) => ({
            me,
            plan: planGroup({ names: all, owners, members: live, me }),
          }));
          expect(plans.reduce((sum, p) => sum + p.plan.quota, 0)).toBe(n);
          for (const { me, plan } of plans) {
            for (const c of plan.claim) expect(owners.has(c)).toBe(false);
            for (const r of plan.release) expect(owners.get(r)).toBe(me);
            const mine = all.filter((x) => owners.get(x) === me).length;
            expect(mine - plan.release.length + plan.claim.length).toBeLessThanOrEqual(plan.quota);
          }
        },
      ),
    );
  });
});
