/**
 * What chat's `/status`, `/cost` and `/model` (alone) show: the session's
 * figures read from its trace (tokens and cost, priced as `trace stats`
 * prices them, every pair at its own price), the context size of its last
 * request against the model's window, and the configured models.
 *
 * @module
 */
import type { Session } from "../../agent/session.ts";
import { formatTokens, formatUsd } from "../../display/numbers.ts";
import { safeText } from "../../display/terminal_text.ts";
import { createPriceBook } from "../../inspect/pricing.ts";
import { collectStats } from "../../inspect/stats.ts";
import { MODEL_PRESETS } from "../../models/catalog.ts";
import { findModel, loadProjectConfig } from "../../state/project_config.ts";
import { listSessionFiles } from "../../trace/paths.ts";
import { groupSessions } from "../../trace/session_files.ts";
import { projectConfigPathOf } from "../../trace/layout.ts";

/** Tokens and cost of a session so far (its subagents included). */
export interface SessionFigures {
  /** Tokens of every request. */
  tokens: number;
  /** USD, null when no request had a price. */
  usd: number | null;
  /** False when some tokens had no price. */
  complete: boolean;
}

/** The figures of `session` from its trace files under `tracesDir`. */
export async function sessionFigures(session: Session, tracesDir: string): Promise<SessionFigures> {
  const refs = await listSessionFiles(tracesDir, session.sessionId);
  if (refs.length === 0) return { tokens: 0, usd: null, complete: true };
  const sessions = await groupSessions(refs.map((r) => r.path));
  const report = await collectStats(sessions, { prices: createPriceBook() });
  const t = report.total;
  return { tokens: t.tokens.total, usd: t.cost.usd, complete: t.cost.complete };
}

/** `$0.012` (or `unknown`: no price), with a note when part of it is unpriced. */
export function costText(f: SessionFigures): string {
  if (f.usd === null) return f.tokens === 0 ? "$0" : "unknown (the model has no price)";
  return f.complete ? formatUsd(f.usd) : `${formatUsd(f.usd)} (some requests have no price)`;
}

/** The context window of the session's model: configured, else the catalog's; null when unknown. */
export async function contextWindowOf(session: Session): Promise<number | null> {
  const path = projectConfigPathOf(session.tracePath);
  if (path !== null) {
    try {
      const entry = findModel(await loadProjectConfig(path), {
        provider: session.provider,
        model_id: session.modelId,
      });
      if (entry?.context_window !== undefined) return entry.context_window;
    } catch {
      // no readable config: the catalog's figure, if any
    }
  }
  const preset = MODEL_PRESETS.find((p) =>
    p.provider === session.provider && p.model_id === session.modelId
  );
  return preset?.context_window ?? null;
}

/** `1.2k of 200k (0.6%)`, or just the size when the window is unknown. */
export function contextText(used: number, window: number | null): string {
  if (window === null || window <= 0) return formatTokens(used);
  const pct = (used / window) * 100;
  return `${formatTokens(used)} of ${formatTokens(window)} (${pct.toFixed(pct < 10 ? 1 : 0)}%)`;
}

/** The `/model` list: each configured pair, the current one marked. */
export async function configuredModelLines(session: Session): Promise<string[]> {
  const path = projectConfigPathOf(session.tracePath);
  const models = path === null ? [] : (await loadProjectConfig(path)).models;
  if (models.length === 0) return ["[model] no models are configured (penguin config model add)"];
  return [
    "[model] configured models — switch with /model <provider> <model-id>:",
    ...models.map((m) => {
      const current = m.provider === session.provider && m.model_id === session.modelId;
      return `  ${safeText(m.provider)} ${safeText(m.model_id)}${current ? "  (current)" : ""}`;
    }),
  ];
}
