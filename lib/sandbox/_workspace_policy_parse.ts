/**
 * Parsing and validation of a workspace's `penguin.jsonc`: JSONC syntax via
 * `jsonc-parser`, shape via zod, and every problem reported with the line and
 * column of the offending key or value. Pure: no file system access. Loaded
 * only when a workspace has the file (lib/sandbox/workspace_policy.ts imports
 * it on first use), so a start without one reads neither dependency.
 *
 * @module
 */
import {
  findNodeAtLocation,
  type Node,
  parseTree,
  printParseErrorCode,
  stripComments,
} from "jsonc-parser";
import type { ParseError } from "jsonc-parser";
import { z } from "zod";
import { PenguinError } from "../protocol/errors.ts";
import { at, POLICY_APPROVAL_MODES, type Position } from "./_workspace_policy_terms.ts";

export { at, POLICY_APPROVAL_MODES, type Position };
export type { PolicyApprovalMode } from "./_workspace_policy_terms.ts";

/** A host pattern of a network allowlist: `example.com`, `*.example.com`, an IP, each with an optional `:port`. */
const HOST_PATTERN =
  /^(?:\*\.)?[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

const NETWORK_EXPECTED = 'expected "on", "off" or {"allow": ["host", ...]}';

const ruleSchema = z.strictObject({
  name: z.string().min(1),
  pattern: z.string().min(1),
  description: z.string().optional(),
});

const networkSchema = z.union([
  z.enum(["on", "off"]),
  z.strictObject({
    allow: z.array(
      z.string().regex(HOST_PATTERN, {
        error: "expected a host name, *.domain or IP address with an optional :port",
      }),
    ).min(1, { error: "expected at least one host" }),
  }),
], { error: NETWORK_EXPECTED });

/** `"off"`, or an object whose only key `deny` lists server names. */
function isMcpSetting(v: unknown): boolean {
  if (v === "off") return true;
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const keys = Object.keys(v);
  const deny = (v as { deny?: unknown }).deny;
  return keys.length === 1 && keys[0] === "deny" && Array.isArray(deny) &&
    deny.every((n) => typeof n === "string" && n.length > 0);
}

/** The zod schema of `penguin.jsonc`. Unknown keys are errors. */
export const workspacePolicySchema = z.strictObject({
  $schema: z.string().optional(),
  sandbox: z.enum(["workspace-write", "read-only"], {
    error: (issue) =>
      issue.input === "off"
        ? 'expected "workspace-write" or "read-only" ("off" can only be chosen on the command line, with --sandbox off)'
        : 'expected "workspace-write" or "read-only"',
  }).optional(),
  network: networkSchema.optional(),
  writable_roots: z.array(z.string().min(1)).optional(),
  // Paths in the home directory (hidden from commands) to show read-only: "~/..." or absolute.
  home_readable: z.array(z.string().min(1)).optional(),
  command_rules: z.array(ruleSchema).optional(),
  approval: z.enum(POLICY_APPROVAL_MODES, {
    error: `expected one of ${POLICY_APPROVAL_MODES.map((m) => `"${m}"`).join(", ")}`,
  }).optional(),
  git: z.enum(["read-only", "writable"], {
    error: 'expected "read-only" or "writable"',
  }).optional(),
  // MCP servers come only from the agent's config; the workspace can only turn them off.
  mcp: z.custom<"off" | { deny: string[] }>(isMcpSetting, {
    error: 'expected "off" or {"deny": ["server", ...]} (a workspace cannot add MCP servers)',
  }).optional(),
});

/** The settings of `penguin.jsonc` as written (validated, nothing resolved yet). */
export type WorkspacePolicyFile = z.infer<typeof workspacePolicySchema>;

/** The validated file plus a way to find where each setting is written. */
export interface ParsedWorkspacePolicy {
  /** The settings. */
  value: WorkspacePolicyFile;
  /** Where the value at `path` (e.g. `["writable_roots", 1]`) is written. */
  locate(path: ReadonlyArray<string | number>): Position | undefined;
}

/** Offset → line/column over `text`. */
function positionOf(text: string, offset: number): Position {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      start = i + 1;
    }
  }
  return { line, column: offset - start + 1 };
}

/** `network.allow[0]` */
export function renderPath(path: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const seg of path) {
    if (typeof seg === "number") out += `[${seg}]`;
    else out += out === "" ? String(seg) : `.${String(seg)}`;
  }
  return out === "" ? "(top level)" : out;
}

function describe(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") {
    return JSON.stringify(value.length > 60 ? value.slice(0, 57) + "..." : value);
  }
  return String(value);
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  array: "an array",
  object: "an object",
  boolean: "true or false",
  number: "a number",
};

interface Problem {
  path: PropertyKey[];
  message: string;
  key?: boolean;
  /** Offset in the text, when known better than by path (a repeated key). */
  offset?: number;
}

interface IssueLike {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: string;
  input?: unknown;
  keys?: string[];
  errors?: IssueLike[][];
}

function problemsOf(issues: readonly IssueLike[], prefix: PropertyKey[] = []): Problem[] {
  const out: Problem[] = [];
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === "unrecognized_keys") {
      for (const k of issue.keys ?? []) {
        out.push({ path: [...path, k], message: "unknown setting", key: true });
      }
    } else if (
      issue.code === "invalid_union" && issue.input !== null &&
      typeof issue.input === "object" && !Array.isArray(issue.input)
    ) {
      // The object branch is the one meant: report its own problems.
      const branch = issue.errors?.find((errs) =>
        errs.every((e) => e.path.length > 0 || e.code === "unrecognized_keys")
      );
      out.push(...(branch ? problemsOf(branch, path) : [{ path, message: NETWORK_EXPECTED }]));
    } else if (issue.code === "invalid_type" && issue.message.startsWith("Invalid input")) {
      const want = TYPE_NAMES[issue.expected ?? ""] ?? issue.expected ?? "something else";
      out.push({ path, message: `expected ${want}, found ${describe(issue.input)}` });
    } else {
      const msg = issue.message.replace(/^(Invalid input|Invalid string|Too small): /, "");
      out.push({ path, message: `${msg}, found ${describe(issue.input)}` });
    }
  }
  return out;
}

/** Keys written twice in one object (jsonc-parser keeps the last silently). */
function duplicateKeys(
  node: Node | undefined,
  path: (string | number)[] = [],
  out: Problem[] = [],
): Problem[] {
  if (!node) return out;
  if (node.type === "object") {
    const seen = new Set<string>();
    for (const prop of node.children ?? []) {
      const key = prop.children?.[0]?.value as string;
      if (seen.has(key)) {
        out.push({ path: [...path, key], message: "written twice", offset: prop.offset });
      }
      seen.add(key);
      duplicateKeys(prop.children?.[1], [...path, key], out);
    }
  } else if (node.type === "array") {
    (node.children ?? []).forEach((c, i) => duplicateKeys(c, [...path, i], out));
  }
  return out;
}

/**
 * Parse and validate the text of `penguin.jsonc` (`file` names it in
 * messages). Comments and trailing commas are allowed; an empty file has
 * no settings. Throws a config error at the first problem's line and column.
 */
export function parseWorkspacePolicyText(text: string, file: string): ParsedWorkspacePolicy {
  if (stripComments(text).trim() === "") return { value: {}, locate: () => undefined };
  const errors: ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const problem = (pos: Position | undefined, what: string, more = 0): PenguinError => {
    const rest = more > 0 ? ` (and ${more} more problem(s))` : "";
    return new PenguinError("config", `Invalid ${JSON.stringify(file)}: ${at(pos)}${what}${rest}`);
  };
  if (errors.length > 0) {
    const e = errors[0]!;
    throw problem(
      positionOf(text, e.offset),
      `syntax error: ${syntaxProblem(printParseErrorCode(e.error))}`,
      errors.length - 1,
    );
  }
  const locate = (path: ReadonlyArray<string | number>, key = false): Position | undefined => {
    if (!tree) return undefined;
    for (let n = path.length; n >= 0; n--) {
      const node = findNodeAtLocation(tree, [...path.slice(0, n)]);
      if (!node) continue;
      // For a key, point at the key itself rather than its value.
      const target = key && n === path.length && node.parent?.type === "property"
        ? node.parent.children?.[0] ?? node
        : node;
      return positionOf(text, target.offset);
    }
    return undefined;
  };
  if (!tree) return { value: {}, locate: (p) => locate(p) };
  if (tree.type !== "object") {
    const found = tree.type === "array" ? "an array" : describe(tree.value);
    throw problem(positionOf(text, tree.offset), `expected an object, found ${found}`);
  }
  const dupes = duplicateKeys(tree);
  if (dupes.length > 0) {
    const d = dupes[0]!;
    throw problem(
      positionOf(text, d.offset!),
      `${renderPath(d.path)}: ${d.message}`,
      dupes.length - 1,
    );
  }
  const raw = nodeValue(tree);
  const parsed = workspacePolicySchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) {
    const problems = problemsOf(parsed.error.issues as unknown as IssueLike[]);
    const p = problems[0]!;
    let message = `${renderPath(p.path)}: ${p.message}`;
    if (p.key) {
      const known = Object.keys(workspacePolicySchema.shape).filter((k) => k !== "$schema");
      if (p.path.length === 1 && p.message === "unknown setting") {
        message += ` (known settings: ${known.join(", ")})`;
      }
    }
    throw problem(
      locate(p.path as (string | number)[], p.key === true),
      message,
      problems.length - 1,
    );
  }
  const value = parsed.data;
  value.command_rules?.forEach((rule, i) => {
    try {
      new RegExp(rule.pattern);
    } catch (err) {
      throw problem(
        locate(["command_rules", i, "pattern"]),
        `command_rules[${i}].pattern: not a valid regular expression (${(err as Error).message})`,
      );
    }
  });
  return { value, locate: (p) => locate(p) };
}

function nodeValue(node: Node): unknown {
  switch (node.type) {
    case "object": {
      const out: Record<string, unknown> = {};
      for (const prop of node.children ?? []) {
        const [k, v] = prop.children ?? [];
        // defineProperty: a "__proto__" key stays a plain (unknown) setting.
        if (k && v) {
          Object.defineProperty(out, k.value as string, {
            value: nodeValue(v),
            enumerable: true,
            writable: true,
            configurable: true,
          });
        }
      }
      return out;
    }
    case "array":
      return (node.children ?? []).map(nodeValue);
    default:
      return node.value;
  }
}

/** A jsonc-parser error code in words: `CloseBraceExpected` → `close brace expected`. */
function syntaxProblem(code: string): string {
  return code.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}
