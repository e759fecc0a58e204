import assert from "node:assert/strict";
import { readTraceFile } from "../../lib/trace/reader.ts";
import { checkRecordOrder } from "./_support.ts";

const FIXTURES = new URL("../../../shared/fixtures/penguin-traces", import.meta.url).pathname;

async function fixture(name: string) {
  return (await readTraceFile(`${FIXTURES}/${name}`)).messages;
}

async function hasFixtures(): Promise<boolean> {
  try {
    return (await Deno.stat(FIXTURES)).isDirectory;
  } catch {
    return false;
  }
}

Deno.test({
  name: "the record-order checker accepts traces written by PenguinHarness itself",
  ignore: !(await hasFixtures()),
  async fn() {
    for (const name of ["01-simple.jsonl", "02-tool-calls.jsonl", "03-resumed.jsonl"]) {
      checkRecordOrder(await fixture(name));
    }
  },
});

Deno.test({
  name:
    "the record-order checker rejects a decision that is not right after its call, and usage after request_end",
  ignore: !(await hasFixtures()),
  async fn() {
    const records = await fixture("02-tool-calls.jsonl");
    const i = records.findIndex((m) => m.payload.type === "approval_decision");
    const swapped = [...records];
    [swapped[i - 1], swapped[i]] = [swapped[i]!, swapped[i - 1]!];
    assert.throws(() => checkRecordOrder(swapped), /right after a tool_call/);
    const u = records.findIndex((m) => m.payload.type === "token_usage");
    const late = [...records];
    [late[u], late[u + 1]] = [late[u + 1]!, late[u]!];
    assert.throws(() => checkRecordOrder(late), /token_usage/);
  },
});
