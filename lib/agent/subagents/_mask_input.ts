/**
 * The parent's secrets masked in what a subagent tool hands the child: the
 * prompt of `run_subagent` and a follow-up prompt of `input_subagent`. The
 * tool runs with the model's real arguments, and a hostile model that learned
 * a vault value can write it in a prompt; the child session would then record
 * it in its trace, show it in `sessions list` and send it to the provider.
 * The parent's secrets are those of the tool context (its vault, its
 * sandbox's vault, its API keys), masked with the rule of tool output.
 *
 * @module
 */
import { maskSecrets, type Secret, vaultSecrets } from "../../tools/secret_mask.ts";
import type { ToolCallContext } from "../../tools/tool.ts";

/** The parts of a tool context that carry secrets (present at run time, not in the base type). */
interface SecretBearing {
  vault?: Readonly<Record<string, string>>;
  sandbox?: { env?: { vault?: Readonly<Record<string, string>> } };
  secrets?: readonly Secret[];
}

/** `text` with every secret of the calling session (`ctx`) masked. */
export function maskForChild(text: string, ctx: ToolCallContext): string {
  const c = ctx as ToolCallContext & SecretBearing;
  const secrets = [
    ...vaultSecrets(c.vault),
    ...vaultSecrets(c.sandbox?.env?.vault),
    ...(c.secrets ?? []),
  ];
  return secrets.length === 0 ? text : maskSecrets(text, secrets);
}
