/**
 * `penguin models test`: one tiny streamed request per model, reporting the
 * time to the first token and the total latency (the per-group speed test).
 *
 * @module
 */
import { PenguinError } from "../../protocol/errors.ts";
import { DEFAULT_AGENT_ID } from "../../state/ids.ts";
import { userText } from "../../protocol/builders.ts";
import { loadProjectConfig, type ModelRef } from "../../state/project_config.ts";
import { resolveModel } from "../../models/resolve.ts";
import { streamModel } from "../../models/stream.ts";
import type { ModelOutcome } from "../../models/outcome.ts";
import {
  failureCause,
  type FailureClass,
  failureFix,
  failureLabel,
  readFailure,
} from "../../models/failure.ts";
import { bool, type Flag, flagHelp, flagValue, parseDeclared, positiveInteger } from "../args.ts";
import { JSON_OUTPUT, MODEL_ID, PROJECT_ID, PROVIDER } from "./_common_flags.ts";
import type { Command, CommandContext } from "../command.ts";
import { formatTable, projectTarget } from "./_config_common.ts";

const ALL: Flag<boolean> = {
  name: "all",
  type: "boolean",
  help: "test every configured model of the group, in parallel",
};
const TIMEOUT_MS: Flag<number> = {
  name: "timeout-ms",
  type: "string",
  value: "<n>",
  help: "idle timeout per request (default: 30000)",
  parse: positiveInteger,
};

/** The flags of `models test`, in help order. */
const TEST_FLAGS: readonly Flag<unknown>[] = [
  { ...PROVIDER, help: "provider group (required)" },
  { ...MODEL_ID, help: "model id (required unless --all)" },
  ALL,
  TIMEOUT_MS,
  { ...JSON_OUTPUT, help: "print a JSON array of results" },
  PROJECT_ID,
];

const HELP = `Usage: penguin models test --provider <group> --model-id <id> [flags]
       penguin models test --provider <group> --all [flags]

Send one tiny streamed request ("reply with the word pong") to a configured
model and report the time to the first token and the total latency. With
--all, every model configured for the provider group is tested in parallel.
Only configured pairs are tested (add them with "penguin config model add");
each request goes to that entry's own base URL with that entry's own key.

Flags:
${flagHelp(TEST_FLAGS, 24)}

Exit status: 0 when every model answered, 1 when any failed.

Example:
  penguin models test --provider deepseek --model-id deepseek-v4-flash
`;

/** The result of probing one model. */
export interface ProbeResult {
  /** Provider group. */
  provider: string;
  /** Model id. */
  model_id: string;
  /** How the request ended. */
  status: ModelOutcome["status"];
  /** Milliseconds from sending to the first streamed token, or null if none arrived. */
  ttft_ms: number | null;
  /** Milliseconds from sending to the end of the stream. */
  total_ms: number;
  /** The answer text (trimmed, at most 80 chars). */
  text: string;
  /** Error detail when not completed. */
  error?: string;
  /** The failure class when not completed (`refused`, `dns`, `http`, …; see lib/models/failure.ts). */
  failure?: FailureClass;
  /** The short failure label: `connection refused`, `HTTP 503`, `DNS failure`, … */
  failure_label?: string;
  /** The endpoint host, when known. */
  host?: string;
  /** One line on what to do, when not completed. */
  fix?: string;
}

/** Send one tiny request to `ref` and time it. Never throws for model failures. */
export async function probeModel(
  cfgPath: string,
  ref: ModelRef,
  timeoutMs: number,
): Promise<ProbeResult> {
  const cfg = await loadProjectConfig(cfgPath);
  const resolved = resolveModel(cfg, ref, undefined, { configPath: cfgPath });
  const started = performance.now();
  let ttft: number | null = null;
  let text = "";
  let outcome: ModelOutcome = {
    status: "failed",
    error_message: "the stream ended without an outcome",
  };
  const stream = streamModel({
    endpoint: resolved.endpoint,
    system_prompt: "",
    tools: [],
    history: [userText("Reply with the single word: pong")],
    thinking_level: "none",
    max_tokens: 64,
  }, { idleTimeoutMs: timeoutMs });
  for await (const item of stream) {
    if (item.kind === "message") {
      const m = item.message;
      if (
        ttft === null && (m.type === "partial_text" || m.type === "partial_thinking") &&
        m.event_type === "delta"
      ) {
        ttft = performance.now() - started;
      }
      if (m.type === "text" && m.role === "assistant") text += m.text;
    } else if (item.kind === "end") {
      outcome = item.outcome;
    }
  }
  const result: ProbeResult = {
    provider: ref.provider,
    model_id: ref.model_id,
    status: outcome.status,
    ttft_ms: ttft === null ? null : Math.round(ttft),
    total_ms: Math.round(performance.now() - started),
    text: text.trim().slice(0, 80),
  };
  if (outcome.status !== "completed") explain(result, outcome.error_message ?? outcome.status);
  return result;
}

/** Fill the failure fields of `r` from its error text (the same classes as run and trace stats). */
function explain(r: ProbeResult, error: string): void {
  const facts = readFailure(r.status, error);
  r.error = error;
  r.failure = facts.class;
  r.failure_label = facts.class === "other" ? r.status : failureLabel(facts);
  if (facts.host !== undefined) r.host = facts.host;
  if (facts.class !== "other") r.fix = failureFix(facts);
}

function ms(n: number | null): string {
  if (n === null) return "-";
  return n < 1000 ? `${n} ms` : `${(n / 1000).toFixed(2)} s`;
}

async function run(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("models test", args, TEST_FLAGS, 0);
  const provider = flagValue(p, PROVIDER);
  const modelId = flagValue(p, MODEL_ID);
  const all = bool(p, ALL.name);
  const timeoutMs = flagValue(p, TIMEOUT_MS) ?? 30_000;
  if (!provider) {
    throw new PenguinError(
      "usage",
      modelId
        ? "models test: --model-id and --provider must be given together"
        : "models test: --provider is required",
    );
  }
  if (all && modelId) {
    throw new PenguinError("usage", "models test: give either --model-id or --all, not both");
  }
  if (!all && !modelId) {
    throw new PenguinError(
      "usage",
      "models test: --model-id and --provider must be given together (or --all)",
    );
  }
  const { path, root, projectId } = projectTarget(ctx, p);
  const cfg = await loadProjectConfig(path);
  let refs: ModelRef[];
  if (all) {
    refs = cfg.models.filter((m) => m.provider === provider).map((m) => ({
      provider: m.provider,
      model_id: m.model_id,
    }));
    if (refs.length === 0) {
      throw new PenguinError(
        "not_found",
        `models test: no models are configured for provider "${provider}" in ${path}; ` +
          `add one with: penguin config model add --provider ${provider} --model-id <id>`,
      );
    }
  } else {
    refs = [{ provider, model_id: modelId! }];
    // Fail before any network I/O when the pair or its key is not configured.
    resolveModel(cfg, refs[0]!, undefined, { configPath: path });
  }
  if (!bool(p, "json") && refs.length > 1) {
    ctx.io.err(`Testing ${refs.length} models in parallel…\n`);
  }
  const results = await Promise.all(refs.map(async (ref) => {
    try {
      return await probeModel(path, ref, timeoutMs);
    } catch (err) {
      if (!(err instanceof PenguinError) || refs.length === 1) throw err;
      const r: ProbeResult = {
        ...ref,
        status: "failed",
        ttft_ms: null,
        total_ms: 0,
        text: "",
      };
      explain(r, err.message);
      return r;
    }
  }));
  // A provider may echo what it was sent, the key among it (a 401 body, an error in the stream):
  // printed masked, as a session masks it (attack round 24 secrets B6).
  const { currentSecretsMaskValue } = await import("./_display_mask.ts");
  const agent = { root, projectId, agentId: DEFAULT_AGENT_ID };
  const shown = await currentSecretsMaskValue("models test", results, [], ctx, agent);
  if (bool(p, "json")) ctx.io.out(JSON.stringify(shown, null, 2) + "\n");
  else printResults(ctx, shown);
  return results.every((r) => r.status === "completed") ? 0 : 1;
}

/** The results as a table on stdout, and each fix on stderr. */
function printResults(ctx: CommandContext, results: ProbeResult[]): void {
  const rows = [["PROVIDER", "MODEL_ID", "STATUS", "FIRST_TOKEN", "TOTAL", "ANSWER"]];
  for (const r of results) {
    rows.push([
      r.provider,
      r.model_id,
      r.status === "completed" ? "ok" : `FAIL (${r.failure_label ?? r.status})`,
      ms(r.ttft_ms),
      ms(r.total_ms),
      r.status === "completed"
        ? JSON.stringify(r.text)
        : r.failure !== undefined && r.failure !== "other"
        ? failureCause(readFailure(r.status, r.error))
        : r.error ?? "",
    ]);
  }
  ctx.io.out(formatTable(rows));
  for (const r of results) {
    if (r.fix !== undefined) ctx.io.err(`${r.provider}/${r.model_id}: ${r.fix}\n`);
  }
}

/** The `models test` command. */
export const modelsTestCommand: Command = {
  path: ["models", "test"],
  summary: "time one tiny request to a model (first token and total latency)",
  help: HELP,
  run,
};
