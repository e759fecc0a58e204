/**
 * The live OpenTelemetry export of a command that runs sessions (`run`,
 * `chat`; any future host of sessions such as a scheduler): started from the
 * environment and the agent's `system_config.yaml`, handed to the sessions
 * as their `observeTrace` option, shut down after they are disposed. The
 * exporter (and node:crypto, which its span ids need) is loaded only when an
 * endpoint is configured: a command without one does not pay for it at start.
 *
 * @module
 */
import type { Agent } from "../../agent/agent.ts";
import { safeText } from "../../display/terminal_text.ts";
import { resolveTelemetry } from "../../telemetry/config.ts";
import type { LiveTelemetry } from "../../telemetry/live.ts";
import type { CommandContext } from "../command.ts";

/** Start the export when an endpoint is configured; null otherwise. */
export async function startTelemetry(
  ctx: CommandContext,
  agent: Agent,
): Promise<LiveTelemetry | null> {
  const warn = (line: string) => ctx.io.err(`[penguin] warning: ${safeText(line)}\n`);
  const config = resolveTelemetry((name) => Deno.env.get(name), agent.systemConfig, warn);
  if (config === null) return null;
  const { startLiveTelemetry } = await import("../../telemetry/live.ts");
  return startLiveTelemetry(config, { warn });
}
