// A small MCP server for tests, built on the official SDK's server side.
// Run as a stdio server (`deno run ... mcp_test_server.ts [--hang]`), or
// import `createTestServer()` and serve it over HTTP inside a test.
//
// Tools: echo (read-only), fail (isError, no text), crash (the process
// exits mid-call), big {n} (n characters), env (the server's environment
// variable names), cwd (its working directory), read {path} (a file's text, or the error), write
// {path, text}, structured (only structuredContent), picture (an image),
// and one tool with an invalid name. With LISTED_SECRET in its environment it also lists a
// tool whose description and input schema quote that value, one whose name holds a piece of
// it, and `split`, which returns the value in 5-character pieces separated by escape sequences,
// and `hidden_split`, which returns (and describes) it in pieces separated by invisible characters.
import { Server } from "npm:@modelcontextprotocol/sdk@1.32.2/server/index.js";
import { StdioServerTransport } from "npm:@modelcontextprotocol/sdk@1.32.2/server/stdio.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
} from "npm:@modelcontextprotocol/sdk@1.32.2/types.js";

const PNG_1PX =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

const object = (properties: Record<string, unknown> = {}, required: string[] = []) => ({
  type: "object" as const,
  properties,
  required,
});

const TOOLS = [
  {
    name: "echo",
    description: "Echo a message back.",
    inputSchema: object({ message: { type: "string" } }, ["message"]),
    annotations: { readOnlyHint: true },
  },
  { name: "fail", description: "Report an error without text.", inputSchema: object() },
  { name: "crash", description: "Exit the server process mid-call.", inputSchema: object() },
  {
    name: "big",
    description: "Return n characters.",
    inputSchema: object({ n: { type: "number" } }, ["n"]),
    annotations: { readOnlyHint: true },
  },
  { name: "env", description: "List environment variable names.", inputSchema: object() },
  { name: "cwd", description: "The server's working directory.", inputSchema: object() },
  {
    name: "read",
    description: "Read a file.",
    inputSchema: object({ path: { type: "string" } }, ["path"]),
  },
  {
    name: "write",
    description: "Write a file.",
    inputSchema: object({ path: { type: "string" }, text: { type: "string" } }, ["path", "text"]),
  },
  { name: "structured", description: "Only structured content.", inputSchema: object() },
  { name: "picture", description: "Return a 1x1 PNG.", inputSchema: object() },
  { name: "bad name!", description: "An invalid tool name.", inputSchema: object() },
];

type Result = {
  content: Record<string, unknown>[];
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
};

async function call(name: string, args: Record<string, unknown>): Promise<Result> {
  const text = (t: string): Result => ({ content: [{ type: "text", text: t }] });
  switch (name) {
    case "echo":
      return text(`echo: ${String(args.message)}`);
    case "fail":
      return { content: [], isError: true };
    case "crash":
      Deno.exit(3);
      throw new Error("unreachable");
    case "big":
      return text("x".repeat(Number(args.n)));
    case "env":
      return text(Object.keys(Deno.env.toObject()).sort().join("\n"));
    case "cwd":
      return text(Deno.cwd());
    case "read":
      try {
        return text(await Deno.readTextFile(String(args.path)));
      } catch (err) {
        return { ...text(`cannot read: ${(err as Error).message}`), isError: true };
      }
    case "write":
      try {
        await Deno.writeTextFile(String(args.path), String(args.text));
        return text("written");
      } catch (err) {
        return { ...text(`cannot write: ${(err as Error).message}`), isError: true };
      }
    case "split": {
      const v = Deno.env.get("LISTED_SECRET") ?? "";
      return text(`${v.slice(0, 5)}\x1b[0m${v.slice(5, 10)}\x1b]0;\x07${v.slice(10, 15)}`);
    }
    case "hidden_split": {
      // Pieces joined by characters a terminal draws as nothing (LRM, a tag character).
      const v = Deno.env.get("LISTED_SECRET") ?? "";
      return text(`${v.slice(0, 4)}\u200e${v.slice(4, 11)}\u{e0041}${v.slice(11, 18)}`);
    }
    case "argv":
      return text(`usage error: ${Deno.args.join(" | ")}`);
    case "structured":
      return { content: [], structuredContent: { answer: 42 } };
    case "picture":
      return {
        content: [{ type: "text", text: "a dot" }, {
          type: "image",
          data: PNG_1PX,
          mimeType: "image/png",
        }],
      };
    default:
      return { ...text(`no tool ${name}`), isError: true };
  }
}

/** The tools that quote LISTED_SECRET (none without it). */
function secretTools() {
  const secret = Deno.env.get("LISTED_SECRET");
  if (!secret) return [];
  return [
    {
      name: "keyed",
      title: `Keyed ${secret}`,
      description: `Uses key ${secret} (prefix ${secret.slice(0, 9)}).`,
      inputSchema: object({ key: { type: "string", description: `default ${secret}` } }),
    },
    {
      name: `leak_${secret.slice(2, 12)}`,
      description: "A name with a secret.",
      inputSchema: object(),
    },
    { name: "split", description: "Returns the key in pieces.", inputSchema: object() },
    {
      name: "hidden_split",
      description: `Pieces ${secret.slice(0, 6)}\u00ad${secret.slice(6, 13)}\ufe0f${
        secret.slice(13, 20)
      }.`,
      inputSchema: object(),
    },
  ];
}

/** With `--argv-tool` among its arguments: `argv`, which returns them (as a usage error would). */
function argvTools() {
  if (!Deno.args.includes("--argv-tool")) return [];
  return [{ name: "argv", description: "The server's arguments.", inputSchema: object() }];
}

/** A fresh server instance with the test tools. */
export function createTestServer(): Server {
  const server = new Server({ name: "penguin-test", version: "1.0.0" }, {
    capabilities: { tools: {} },
  });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [...TOOLS, ...secretTools(), ...argvTools()],
  }));
  server.setRequestHandler(
    CallToolRequestSchema,
    (req: { params: { name: string; arguments?: Record<string, unknown> } }) =>
      call(req.params.name, req.params.arguments ?? {}),
  );
  return server;
}

if (import.meta.main) {
  if (Deno.args.includes("--hang")) {
    // Read and ignore everything: never answers the handshake.
    for await (const _ of Deno.stdin.readable) { /* ignore */ }
  } else {
    console.error("test server starting");
    await createTestServer().connect(new StdioServerTransport());
  }
}
