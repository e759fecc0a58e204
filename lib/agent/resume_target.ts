/**
 * `--resume latest` (and chat's `--resume` without an id): the latest
 * session of the current directory's workspace. From another directory it
 * used to resume another project's session and run its tools there; now,
 * with no session here, the command refuses and names what to give instead.
 *
 * @module
 */
import type { Agent } from "./agent.ts";
import { PenguinError } from "../protocol/errors.ts";
import { latestSessionIn, realDir } from "../session/select.ts";

/** The session id `target` means: `latest` (or "") is the latest session of `cwd`; anything else is itself. */
export async function resumeTarget(
  command: string,
  agent: Agent,
  target: string,
  cwd: string = Deno.cwd(),
): Promise<string> {
  if (target !== "latest" && target !== "") return target;
  const here = await latestSessionIn(agent.ref, cwd);
  if (here !== null) return here.sessionId;
  throw new PenguinError(
    "not_found",
    `${command}: no session to resume in this workspace (${await realDir(cwd)}): ` +
      `give a session id (penguin sessions list --all lists every workspace's), ` +
      `or run from the session's workspace`,
  );
}
