// Attack round 20 mcpsecrets #2: a subagent run as another agent of the project (`run_subagent`
// with `agent_id`) gets that agent's vault in its commands, and what it writes in the shared
// workspace reached the parent's model, output and trace unmasked: a session masks the vault and
// MCP values of the project's other agents too.
import assert from "node:assert/strict";
import { otherAgentSecrets } from "../../lib/agent/_secrets.ts";
import { DEFAULT_AGENT_ID, DEFAULT_PROJECT_ID } from "../../lib/state/mod.ts";
import { runCliOk } from "../support/cli.ts";
import { withRoot } from "../support/roots.ts";

Deno.test("a session knows the vault values of the project's other agents", async () => {
  await withRoot(async (root) => {
    await runCliOk(["--root", root, "mcp", "list", "--agent-id", "B"]); // makes agent B
    await runCliOk([
      "--root",
      root,
      "config",
      "vault",
      "set",
      "--agent-id",
      "B",
      "--key",
      "B_KEY",
      "--value",
      "b-vault-7f2e91c4d0a8",
    ]);
    const ref = { root, projectId: DEFAULT_PROJECT_ID, agentId: DEFAULT_AGENT_ID };
    const got = await otherAgentSecrets(ref);
    assert.ok(got.some((s) => s.value === "b-vault-7f2e91c4d0a8"), JSON.stringify(got));
    // Its own agent's are not read again here.
    assert.deepEqual(
      await otherAgentSecrets({ ...ref, agentId: "B" }).then((s) =>
        s.filter((x) => x.value === "b-vault-7f2e91c4d0a8")
      ),
      [],
    );
  });
});
