/**
 * penguin SDK: the public surface for Deno programs that embed penguin.
 *
 * The OmniMessage protocol is exported at the top level; each layer is a
 * namespace: `trace` (append-only store), `state` (data root and config
 * files), `models` (catalog, pair resolution, streaming clients) and
 * `tools` (tool contract, execution framing, confined file tools).
 *
 * @example Validate one trace record
 * ```ts
 * import { parseMessageLine } from "./mod.ts";
 *
 * const result = parseMessageLine('{"timestamp":"2026-01-01T00:00:00.000Z","type":"event_msg","payload":{"type":"request_begin"}}');
 * if (!result.ok) throw new Error(result.problem.message);
 * ```
 *
 * @module
 */
export * from "./protocol/mod.ts";
export { VERSION } from "./version.ts";
/** The append-only trace store: writer, session lock, streaming reader, validation. */
export * as trace from "./trace/mod.ts";
/** The data root and its config files. */
export * as state from "./state/mod.ts";
/** The model layer: catalog, (provider, model_id) resolution, streaming clients. */
export * as models from "./models/mod.ts";
/** The OS sandbox every child process runs under. */
export * as sandbox from "./sandbox/mod.ts";
/** Tools: the contract, execution framing, confined file tools and the command policy. */
export * as tools from "./tools/mod.ts";
/** Sessions derived from traces: replay, locate, list, fork, clone, import, delete, tree. */
export * as session from "./session/mod.ts";
/**
 * The agent loop: `runTask` (one task from start to end, as `penguin run`
 * runs it: workspace policy, background and goal rounds), `createAgent`,
 * live sessions (`run`, `steer`, `dispose`), approvals.
 */
export * as agent from "./agent/mod.ts";
/** OpenTelemetry: spans from trace records (GenAI conventions), OTLP/JSON, the live exporter. */
export * as telemetry from "./telemetry/mod.ts";
