/**
 * The live OpenTelemetry export of a command that runs sessions (`run`,
 * `chat`; any future host of sessions such as a scheduler): started from the
 * environment and the agent's `system_config.yaml`, handed to the sessions
 * as their `observeTrace` option, shut down after they are disposed.
 *
 * @module
 */
import type { Agent } from "../../agent/agent.ts";
import { safeText } from "../../display/terminal_text.ts";
import { type LiveTelemetry, liveTelemetryFor } from "../../telemetry/live.ts";
import type { CommandContext } from "../command.ts";

/** Start the export when an endpoint is configured; null otherwise. */
export function startTelemetry(ctx: CommandContext, agent: Agent): LiveTelemetry | null {
  return liveTelemetryFor((name) => Deno.env.get(name), agent.systemConfig, {
    warn: (line) => ctx.io.err(`[penguin] warning: ${safeText(line)}\n`),
  });
}
