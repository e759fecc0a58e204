// No promise without the feature: what penguin's default system prompt tells
// the model it can do, it can do. The test reads the prompt penguin actually
// sent, takes every place, tool, command and marker it names, and uses them
// through the CLI against the scripted model server:
// - the directories it says to write (scratchpad, shared environments, user
//   and workspace memory) are writable by write_file and by commands;
// - the skills directory it says to read is readable by commands;
// - the vault keys it lists reach commands as environment variables;
// - every tool it names in backticks (`run_subagent`) is offered;
// - every `penguin <command>` it names is a command;
// - every `[marker]` it explains is one penguin produces;
// - every section heading is one of the capabilities checked here.
// Scheduled tasks (the Schedules section) are checked where `penguin
// schedules run` is implemented, not here.
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../support/cli.ts";
import { item, type ScriptedTurn, turn } from "../support/model_server.ts";
import { withModelRoot } from "../support/roots.ts";
import { allCommands } from "../../lib/cli/registry.ts";
import { DEFAULT_SYSTEM_PROMPT } from "../../lib/state/default_prompts.ts";

type Body = {
  messages: { role: string; content: unknown; tool_call_id?: string }[];
  tools?: { function: { name: string } }[];
};

/** The sections the default prompt has, and what checks each one's promises. */
const SECTIONS: Record<string, string> = {
  "Role": "prose",
  "Personality": "prose",
  "Success criteria": "prose",
  "Constraints": "the secret files are invisible (tests/cli/memory_confinement_test.ts)",
  "Stop rules": "prose",
  "Tool use": "the tools named in backticks are offered",
  "System markers": "every marker named is produced",
  "File system": "the directories named are writable",
  "Suggested workflows": "run_subagent is offered; PLAN.md goes to the writable scratchpad",
  "Vault": "vault keys reach commands",
  "Skills": "the skills directory is readable by commands",
  "Memory": "both memory directories are writable; the index is injected (memory_test.ts)",
  "Environment": "facts",
  // Scheduled tasks are run by `penguin schedules run`; its own tests check this section.
  "Schedules": "checked with the schedules command",
};

function must(re: RegExp, text: string, what: string): string {
  const m = re.exec(text);
  assert.ok(m?.[1], `the prompt names ${what}`);
  return m[1];
}

/** The places the prompt tells the model to write, and the skills directory it says to read. */
function promisedPaths(prompt: string) {
  const appDir = must(/^- App Data Dir: (\S+)$/m, prompt, "the App Data Dir");
  const agentId = must(/^- Agent ID: (\S+)$/m, prompt, "the agent id");
  return {
    writable: {
      scratchpad: must(/Scratchpad for this session: (\S+)/, prompt, "the scratchpad"),
      shared_env: must(/Shared environments: (\S+)<name>\//, prompt, "shared_env") + "probe",
      user_memory: must(/User memory lives in `([^`]+)`/, prompt, "user memory")
        .replace("<App Data Dir>", appDir).replace("<Agent ID>", agentId),
      workspace_memory: must(/lives in (\S+), organised/, prompt, "workspace memory"),
    },
    skills: must(/`(\S+)\/<name>\/`/, prompt, "the skills directory"),
  };
}

Deno.test("every place, tool, command and marker the default system prompt names is real", async () => {
  let prompt = "";
  let plan: ReturnType<typeof promisedPaths> | undefined;
  await withModelRoot({
    maxRequests: 5,
    handler: (req, i): ScriptedTurn | undefined => {
      if (i > 0) return turn.text("done");
      prompt = JSON.stringify(
        (req.body as Body).messages.find((m) => m.role === "system")?.content,
      );
      prompt = JSON.parse(prompt) as string;
      plan = promisedPaths(prompt);
      const calls = Object.entries(plan.writable).flatMap(([name, dir]) => [
        item.toolCall("write_file", {
          file_path: join(dir, `by-tool-${name}.txt`),
          content: "tool\n",
        }, { id: `w_${name}` }),
        item.toolCall("exec_command", {
          cmd: `mkdir -p '${dir}' && echo cmd > '${dir}/by-cmd-${name}.txt' && echo wrote`,
        }, { id: `c_${name}` }),
      ]);
      calls.push(
        item.toolCall("exec_command", { cmd: `cat '${plan.skills}/probe/SKILL.md'` }, {
          id: "skills",
        }),
        item.toolCall("exec_command", { cmd: `echo "vault=$PROBE_KEY"` }, { id: "vault" }),
      );
      return turn.of(...calls);
    },
  }, async (sb, server) => {
    const state = join(sb.root, "default_project", "agents", "default_agent", "agent_state");
    await Deno.mkdir(join(state, "skills", "probe"), { recursive: true });
    await Deno.writeTextFile(join(state, "skills", "probe", "SKILL.md"), "probe skill text\n");
    await Deno.writeTextFile(join(state, ".vault.toml"), 'PROBE_KEY = "k-value"\n');
    const r = await runCli(["--root", sb.root, "run", "--workspace", sb.workspace, "-m", "probe"]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(plan, "the model was asked");

    // Sections: each heading is a capability this test (or the one it names) checks.
    const headings = [...prompt.matchAll(/^# (.+)$/gm)].map((m) => m[1]!);
    for (const h of headings) assert.ok(h in SECTIONS, `no check covers the section "# ${h}"`);

    // Places: written by the file tools and by commands, visible on the host.
    const outputs = new Map(
      (server.requests[1]!.body as Body).messages.filter((m) => m.role === "tool")
        .map((m) => [m.tool_call_id!, String(m.content)]),
    );
    for (const [name, dir] of Object.entries(plan.writable)) {
      assert.doesNotMatch(
        outputs.get(`w_${name}`)!,
        /Refus|outside|denied/i,
        `${name}: ${outputs.get(`w_${name}`)}`,
      );
      assert.match(outputs.get(`c_${name}`)!, /^wrote/, `${name}: ${outputs.get(`c_${name}`)}`);
      assert.equal(await Deno.readTextFile(join(dir, `by-tool-${name}.txt`)), "tool\n", name);
      assert.equal(await Deno.readTextFile(join(dir, `by-cmd-${name}.txt`)), "cmd\n", name);
    }
    assert.match(outputs.get("skills")!, /probe skill text/);
    assert.ok(prompt.includes("- PROBE_KEY"), "the vault key is listed");
    assert.match(outputs.get("vault")!, /^vault=\S+/, "and set in commands");

    // Tools named in backticks in the template are offered.
    const offered = new Set(
      ((server.requests[0]!.body as Body).tools ?? []).map((t) => t.function.name),
    );
    const named = [...DEFAULT_SYSTEM_PROMPT.matchAll(/`([a-z]+(?:_[a-z]+)+)`/g)].map((m) => m[1]!);
    assert.ok(named.length > 0);
    for (const tool of named) {
      assert.ok(offered.has(tool), `the prompt names a missing tool ${tool}`);
    }

    // Commands: every `penguin <command> …` the prompt names (in backticks) exists.
    const commands = (await allCommands()).map((c) => c.path.join(" "));
    for (const m of prompt.matchAll(/`penguin ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?[^`]*`/g)) {
      const words = m[2] ? `${m[1]} ${m[2]}` : m[1]!;
      const found = commands.some((c) => c === words || c.startsWith(`${words} `)) ||
        commands.includes(m[1]!);
      assert.ok(found, `the prompt names "penguin ${words}", which is not a command`);
    }

    // Markers: each one the prompt explains is produced by penguin's code.
    const markers = [...prompt.matchAll(/`\[([a-z_]+)\]`/g)].map((m) => m[1]!);
    assert.ok(markers.length >= 4);
    const sources = await libSources();
    for (const tag of markers) {
      const produced = new RegExp(`(markerBlock\\(\\s*"${tag}"|"\\[${tag}\\]|\`\\[${tag}\\])`);
      assert.ok(sources.some((s) => produced.test(s)), `nothing in lib/ produces [${tag}]`);
    }
  }, { visible: true });
});

async function libSources(): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: URL) => {
    for await (const e of Deno.readDir(dir)) {
      if (e.isDirectory) await walk(new URL(`${e.name}/`, dir));
      else if (e.name.endsWith(".ts")) out.push(await Deno.readTextFile(new URL(e.name, dir)));
    }
  };
  await walk(new URL("../../lib/", import.meta.url));
  return out;
}
