/**
 * A first run on a terminal: a project with no model at all, and a provider
 * key in the environment, is offered that provider's recommended model (y/N).
 * Yes adds it, seeded from the catalog like `config model add`, as the
 * default; no (or no terminal) leaves the project as it is, and the run fails
 * with the line to run instead.
 *
 * @module
 */
import { firstModel } from "../../models/resolve.ts";
import { findProviderGroup } from "../../models/catalog.ts";
import { DEFAULT_PROJECT_ID } from "../../state/ids.ts";
import { projectConfigPath } from "../../state/paths.ts";
import { addModel, loadProjectConfig, type ModelInput } from "../../state/project_config.ts";
import { resolveDataRoot } from "../../state/root.ts";
import type { CommandContext } from "../command.ts";
import { confirmed } from "./_confirm.ts";

/** Offer the recommended model when the project has none; resolves whether one was added. */
export async function offerFirstModel(ctx: CommandContext, projectId?: string): Promise<boolean> {
  if (!ctx.io.isTty || !Deno.stdin.isTerminal()) return false;
  const m = firstModel();
  if (!m.keySet) return false;
  const root = resolveDataRoot(ctx.root !== undefined ? { root: ctx.root } : {});
  const path = projectConfigPath({ root, projectId: projectId ?? DEFAULT_PROJECT_ID });
  const cfg = await loadProjectConfig(path);
  if (cfg.default_model || cfg.models.length > 0) return false;
  const group = findProviderGroup(m.provider);
  const label = group?.label ?? m.provider;
  const yes = await confirmed(
    ctx,
    `No model is configured yet, and ${group?.api_key_env} is set. ` +
      `Add ${label}'s recommended model (${m.provider}, ${m.model_id}) as the default`,
    "adding a model",
  );
  if (!yes) return false;
  const input: ModelInput = { provider: m.provider, model_id: m.model_id };
  // The config command's module (and what it imports) only once a model is added: not at every run.
  const { seedNewEntry } = await import("./config.ts");
  seedNewEntry(input, ctx);
  await addModel(path, input, { setDefault: true });
  ctx.io.out(`Added model (provider=${m.provider}, model_id=${m.model_id}) as the default.\n`);
  return true;
}
