// docs/sdk.md's example of a new tool: one file holding its schema, limits,
// permission, preview and implementation.
import { z } from "zod";
import { tools } from "../../lib/mod.ts";

/** word_count: how many words a text has. */
export const wordCountTool = tools.defineTool({
  name: "word_count",
  description: "Count the words of a text.",
  args: z.object({ text: z.string().describe("The text to count.") }),
  permission: "r",
  timeoutMs: 5_000,
  preview: ({ args }) => {
    const text = args()?.text; // null while the arguments still stream
    return typeof text === "string" ? text.slice(0, 40) : null;
  },
  async *run({ text }) {
    const words = text.split(/\s+/).filter((w) => w !== "").length;
    yield { type: "delta", text: `${words} words` };
  },
});
