/**
 * An amount held by each of many holders, summed across them: a holder is
 * any object; it counts while it holds a positive amount and stops counting
 * once it holds 0 or is collected (one dropped without letting go is not
 * counted forever). The process-wide bounds on image data
 * (`lib/tools/image_ledger.ts`) and on what running model responses keep
 * (`lib/models/translate.ts`) are kept in such ledgers.
 *
 * @module
 */

/** What each holder holds, and the sum of the others'. */
export interface HolderLedger {
  /** Record that `holder` now holds `amount` (0: it lets go). */
  hold(holder: object, amount: number): void;
  /** What every holder but `holder` holds. */
  heldBesides(holder: object | undefined): number;
}

/** An empty ledger. */
export function createHolderLedger(): HolderLedger {
  const amountOf = new WeakMap<object, number>();
  const holders = new Set<WeakRef<object>>();
  const refOf = new WeakMap<object, WeakRef<object>>();
  return {
    hold(holder, amount) {
      if (amount > 0) {
        amountOf.set(holder, amount);
        if (!refOf.has(holder)) {
          const ref = new WeakRef(holder);
          refOf.set(holder, ref);
          holders.add(ref);
        }
        return;
      }
      amountOf.delete(holder);
      const ref = refOf.get(holder);
      if (ref !== undefined) holders.delete(ref);
      refOf.delete(holder);
    },
    heldBesides(holder) {
      let total = 0;
      for (const ref of holders) {
        const h = ref.deref();
        if (h === undefined) holders.delete(ref);
        else if (h !== holder) total += amountOf.get(h) ?? 0;
      }
      return total;
    },
  };
}
