import assert from "node:assert/strict";
import { join } from "node:path";
import { createAgent, type Session } from "../../lib/agent/mod.ts";
import { userText } from "../../lib/protocol/builders.ts";
import { addModel } from "../../lib/state/project_config.ts";
import { setVaultEntry } from "../../lib/state/vault.ts";
import { SESSION_ID_PATTERN } from "../../lib/state/ids.ts";
import { loadSessionForResume } from "../../lib/session/mod.ts";
import type { CompleteMessage } from "../../lib/protocol/types.ts";
import { turn } from "../support/model_server.ts";
import { assertGoodTrace, collect, requestMessages, tracesDir } from "./_support.ts";
import { withModelRoot } from "../support/roots.ts";

Deno.test("a new session has a well-formed id, locks its model and workspace, and traces under the date dir", async () => {
  await withModelRoot({ turns: [turn.text("hi")] }, async (sb) => {
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession({ workspaceDir: sb.workspace });
    assert.match(session.sessionId, SESSION_ID_PATTERN);
    assert.equal(session.provider, "custom");
    assert.equal(session.modelId, "m");
    assert.equal(session.workspaceDir, sb.workspace);
    assert.equal(session.metaMessage.payload.workspace, sb.workspace);
    await collect(session.run("hello", { approve: "allow-all" }));
    await session.dispose();
    const date = session.tracePath.split("/").at(-2)!;
    assert.match(date, /^\d{4}-\d{2}-\d{2}$/);
    assert.equal(
      session.tracePath,
      join(tracesDir(sb.root), date, `${session.sessionId}_001.jsonl`),
    );
    const records = await assertGoodTrace(sb.root, session.sessionId);
    assert.deepEqual(records[0]!.payload, session.metaMessage.payload);
  });
});

Deno.test("omitting the workspace creates a temporary one; a missing explicit workspace fails", async () => {
  await withModelRoot({}, async (sb) => {
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession();
    const ws = session.workspaceDir;
    assert.match(ws, /\/agents\/default_agent\/workspaces\/tmp-[0-9a-f]{8}$/);
    assert.ok((await Deno.stat(ws)).isDirectory);
    await session.dispose();
    await assert.rejects(
      agent.createSession({ workspaceDir: join(sb.workspace, "nope") }),
      /Workspace does not exist/,
    );
  });
});

Deno.test("half a model pair is rejected, an unknown pair fails, and no pair uses the default model", async () => {
  await withModelRoot({}, async (sb) => {
    const agent = await createAgent({ root: sb.root });
    await assert.rejects(
      agent.createSession({ workspaceDir: sb.workspace, provider: "custom" }),
      /must be given together/,
    );
    await assert.rejects(
      agent.createSession({ workspaceDir: sb.workspace, modelId: "m" }),
      /must be given together/,
    );
    await assert.rejects(
      agent.createSession({ workspaceDir: sb.workspace, provider: "custom", modelId: "other" }),
      /No model \(custom, other\)/,
    );
    const s = await agent.createSession({ workspaceDir: sb.workspace });
    assert.deepEqual([s.provider, s.modelId], ["custom", "m"]);
    await s.dispose();
  });
});

Deno.test("a missing API key fails at creation, before any trace exists", async () => {
  await withModelRoot({}, async (sb) => {
    await addModel(join(sb.root, "default_project", ".project_config.toml"), {
      provider: "deepseek",
      model_id: "deepseek-v4-flash",
    });
    const agent = await createAgent({ root: sb.root, env: { HOME: "/nonexistent" } });
    await assert.rejects(
      agent.createSession({
        workspaceDir: sb.workspace,
        provider: "deepseek",
        modelId: "deepseek-v4-flash",
      }),
      /No API key for model \(deepseek, deepseek-v4-flash\)/,
    );
    const entries = await Array.fromAsync(Deno.readDir(tracesDir(sb.root))).catch(() => []);
    assert.deepEqual(entries.filter((e) => e.name !== ".locks"), []);
  });
});

Deno.test("the system prompt carries AGENTS.md, vault key names (never values) and the environment lines", async () => {
  await withModelRoot({ turns: [turn.text("ok")] }, async (sb, server) => {
    const first = await createAgent({ root: sb.root });
    await Deno.writeTextFile(first.paths.agentsMd, "  Always answer in haiku.  \n");
    await setVaultEntry(first.paths.vault, "DEPLOY_TOKEN", "s3cr3t-value-123");
    const agent = await createAgent({ root: sb.root });
    const session = await agent.createSession({ workspaceDir: sb.workspace });
    const prompt = session.metaMessage.payload.system_prompt;
    assert.match(
      prompt,
      /\[developer_instructions\][\s\S]*Always answer in haiku\.\n\[\/developer_instructions\]/,
    );
    assert.match(prompt, /^- DEPLOY_TOKEN$/m);
    assert.ok(!prompt.includes("s3cr3t-value-123"), "vault values never reach the prompt");
    assert.match(prompt, new RegExp(`^- CWD: ${sb.workspace}$`, "m"));
    assert.match(prompt, /^- Provider: custom$/m);
    assert.match(prompt, /^- Model ID: m$/m);
    assert.match(prompt, new RegExp(`^- Session ID: ${session.sessionId}$`, "m"));
    assert.match(prompt, /^- Date: \d{4}-\d{2}-\d{2}$/m);
    assert.match(prompt, /^- Shell: bash$/m);
    assert.ok(!/\{\{[A-Z_]+\}\}/.test(prompt), "no placeholder is left");
    assert.equal(prompt, prompt.trim());
    await collect(session.run("hi", { approve: "allow-all" }));
    await session.dispose();
    const records = await assertGoodTrace(sb.root, session.sessionId);
    const text = await Deno.readTextFile(session.tracePath);
    assert.ok(!text.includes("s3cr3t-value-123"), "vault values never reach the trace");
    assert.equal(records.length > 0, true);
    const sent = JSON.stringify(server.requests[0]!.body);
    assert.ok(!sent.includes("s3cr3t-value-123"), "vault values never reach the model");
  });
});

Deno.test("a recorded session reopened from its replay continues the same trace with its history", async () => {
  await withModelRoot({
    turns: [
      turn.toolCall("write_file", { file_path: "a.txt", content: "A" }),
      turn.text("Wrote it."),
      turn.text("Still here."),
    ],
  }, async (sb, server) => {
    const agent = await createAgent({ root: sb.root });
    const first = await agent.createSession({ workspaceDir: sb.workspace });
    await collect(first.run("Write a.", { approve: "allow-all" }));
    await first.dispose();
    const loaded = await loadSessionForResume({
      root: sb.root,
      projectId: "default_project",
      agentId: "default_agent",
      target: first.sessionId,
    });
    const r = loaded.replay;
    const again = await agent.openRecordedSession({
      meta: loaded.meta,
      state: {
        history: r.history.map((m) => m.payload as CompleteMessage),
        carryOver: r.carryOver.map((m) => m.payload as CompleteMessage),
        sessionTokens: r.sessionTokens,
        lastRequestTotal: r.lastRequestTotal,
        sessionTurns: r.sessionTurns,
      },
      trace: { dateDir: loaded.file.dateDir, index: loaded.file.index },
    });
    assert.equal(again.sessionId, first.sessionId);
    assert.equal(again.tracePath, first.tracePath);
    const stream = await collect(again.run("Still there?", { approve: "allow-all" }));
    assert.ok(!stream.some((m) => m.type === "session_meta"));
    await again.dispose();
    const sent = JSON.stringify(server.requests[2]!.body);
    assert.ok(
      sent.indexOf("Write a.") < sent.indexOf("Wrote it.") &&
        sent.indexOf("Wrote it.") < sent.indexOf("Still there?"),
    );
    const records = await assertGoodTrace(sb.root, first.sessionId);
    assert.equal(records.filter((m) => m.type === "session_meta").length, 1);
    const usage = records.filter((m) => m.payload.type === "token_usage").at(-1)!.payload as {
      session: { total: number };
    };
    assert.equal(usage.session.total, again.usage().sessionTokens.total);
  });
});

Deno.test("a model without vision gets images as attachment lines; data URLs are saved to the scratchpad", async () => {
  let session: Session | undefined;
  await withModelRoot({
    handler: (_req, i) => {
      if (i === 0) {
        session!.steer([
          userText("and this one"),
          {
            type: "image_url",
            role: "user",
            image_url: "https://example.com/b.png",
            stop_reason: "completed",
          },
        ]);
        return turn.text("Seen the first.");
      }
      return i === 1 ? turn.text("Seen the second.") : undefined;
    },
  }, async (sb, server) => {
    await addModel(join(sb.root, "default_project", ".project_config.toml"), {
      provider: "custom",
      model_id: "blind",
      base_url: server.baseUrl("openai-chat"),
      client_type: "openai-chat",
      vision: false,
    });
    const agent = await createAgent({ root: sb.root });
    session = await agent.createSession({
      workspaceDir: sb.workspace,
      provider: "custom",
      modelId: "blind",
    });
    const png = "iVBORw0KGgoAAAANSUhEUg==";
    await collect(session.run([
      userText("Look at these."),
      {
        type: "image_url",
        role: "user",
        image_url: `data:image/png;base64,${png}`,
        stop_reason: "completed",
      },
      {
        type: "image_url",
        role: "user",
        image_url: "https://example.com/a.png",
        stop_reason: "completed",
      },
      {
        type: "image_url",
        role: "user",
        image_url: "file:///etc/passwd",
        stop_reason: "completed",
      },
    ], { approve: "allow-all" }));
    await session.dispose();
    const first = requestMessages(server, 0).at(-1)!.content as string;
    const m =
      /^Look at these\.\n\n\[attached image: (\/\S+\/upload-[0-9a-f]{8}\.png)\]\n\[attached image: https:\/\/example\.com\/a\.png\]\n\[an attached image could not be saved and was dropped\]$/
        .exec(first);
    assert.ok(m, first);
    assert.ok(m[1]!.includes(`/scratchpad/${session.sessionId}/`));
    assert.deepEqual(
      await Deno.readFile(m[1]!),
      Uint8Array.from(atob(png), (c) => c.charCodeAt(0)),
    );
    const second = JSON.stringify(requestMessages(server, 1).at(-1));
    assert.ok(
      second.includes(
        "[user_steering]\\nand this one\\n\\n[attached image: https://example.com/b.png]\\n[/user_steering]",
      ),
      second,
    );
    assert.ok(!JSON.stringify(server.requests.map((r) => r.body)).includes("image_url"));
    await assertGoodTrace(sb.root, session.sessionId);
  });
});
