/**
 * Session-wide tool-call id allocation. Providers reuse ids (Gemini
 * uses the function name; some servers restart numbering), so every inbound
 * id is made unique within the session by a `#n` suffix, and the suffix is
 * stripped again before the id goes back upstream.
 *
 * @module
 */

/** The id set of one session; shared across compaction rebuilds. */
export interface ToolCallIds {
  /** Make an inbound provider id unique: unused ids are kept, used ones get the first free `#n` (n ≥ 2). */
  allocate(providerId: string): string;
  /** Mark ids as used (historical ids on resume). */
  register(ids: Iterable<string>): void;
  /** Whether `id` is already used. */
  has(id: string): boolean;
}

/** A new id set, optionally pre-registered with historical ids. */
export function createToolCallIds(historical: Iterable<string> = []): ToolCallIds {
  const used = new Set<string>(historical);
  return {
    allocate(providerId: string): string {
      if (!used.has(providerId)) {
        used.add(providerId);
        return providerId;
      }
      let n = 2;
      while (used.has(`${providerId}#${n}`)) n++;
      const id = `${providerId}#${n}`;
      used.add(id);
      return id;
    },
    register(ids: Iterable<string>): void {
      for (const id of ids) used.add(id);
    },
    has(id: string): boolean {
      return used.has(id);
    },
  };
}

/** The provider's id for an outbound message: a trailing `#<digits>` removed. */
export function outboundToolCallId(id: string): string {
  return id.replace(/#\d+$/, "");
}
