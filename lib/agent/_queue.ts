// The merge point of one turn: several concurrent producers (the model
// stream driver and each running tool) push envelopes; one consumer takes
// them in push order. `next()` resolves null once every producer has finished
// and the queue is empty.

/** A multi-producer, single-consumer queue. */
export interface MergeQueue<T> {
  /** Register a producer. */
  open(): void;
  /** A producer finished. */
  close(): void;
  /** Push an item and wake the consumer. */
  push(item: T): void;
  /** The next item, or null when drained and no producer remains. */
  next(): Promise<T | null>;
}

/** A new, empty queue with no producers. */
export function createMergeQueue<T>(): MergeQueue<T> {
  const items: T[] = [];
  let head = 0;
  let producers = 0;
  let wake: (() => void) | null = null;
  const signal = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  return {
    open() {
      producers++;
    },
    close() {
      producers--;
      signal();
    },
    push(item) {
      items.push(item);
      signal();
    },
    async next() {
      for (;;) {
        if (head < items.length) {
          const item = items[head]!;
          items[head] = undefined as T;
          head++;
          if (head > 1024 && head * 2 > items.length) {
            items.splice(0, head);
            head = 0;
          }
          return item;
        }
        if (producers <= 0) return null;
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  };
}
