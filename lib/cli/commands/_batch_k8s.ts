/**
 * `penguin batch k8s <tasks> --image <ref>`: print the Kubernetes manifests
 * that run a task file as an Indexed Job (see batch/k8s.ts). The task file
 * is validated first, exactly as `batch run` will read it in the pods.
 *
 * @module
 */
import { readBatchInput } from "../../batch/input_file.ts";
import { basename } from "node:path";
import { stringify } from "yaml";
import { PenguinError } from "../../protocol/errors.ts";
import { parseTaskFile } from "../../batch/task_file.ts";
import {
  type Confinement,
  CONFINEMENTS,
  dnsLabel,
  k8sManifests,
  POD_PATHS,
} from "../../batch/k8s.ts";
import { type Flag, flagHelp, flagValue, parseDeclared, positiveInteger } from "../args.ts";
import type { Command, CommandContext } from "../command.ts";
import { MODEL_ID, PROVIDER } from "./_common_flags.ts";

/** The most a ConfigMap holds (1 MiB), less room for its metadata. */
const CONFIGMAP_MAX = 1_000_000;

const IMAGE: Flag = {
  name: "image",
  type: "string",
  value: "<ref>",
  help: "the image the pods run (see Containerfile; required)",
};
const PARALLELISM: Flag<number> = {
  name: "parallelism",
  type: "string",
  value: "<p>",
  help: "pods at a time (default: 10)",
  parse: positiveInteger,
};
const SHARDS: Flag<number> = {
  name: "shards",
  type: "string",
  value: "<n>",
  help:
    "indexes of the Job, one shard of the tasks each (default:\nthe number of tasks, at most 100)",
  parse: positiveInteger,
};
const NAMESPACE: Flag = { name: "namespace", type: "string", value: "<ns>", help: "namespace" };
const NAME: Flag = {
  name: "name",
  type: "string",
  value: "<name>",
  help: "base name of the objects (default: penguin-<task file name>)",
};
const SECRET: Flag = {
  name: "secret",
  type: "string",
  value: "<name>",
  help: "the Secret whose keys become the pods' environment, e.g.\n" +
    "DEEPSEEK_API_KEY (default: penguin-provider-keys)",
};
const OTLP: Flag = {
  name: "otlp-endpoint",
  type: "string",
  value: "<url>",
  help: "OTLP/HTTP endpoint of the collector the pods export spans to",
};
const POD_PARALLEL: Flag<number> = {
  name: "pod-parallel",
  type: "string",
  value: "<n>",
  help: "tasks at a time in each pod, and its CPU request (default: 1)",
  parse: positiveInteger,
};
const BACKOFF: Flag<number> = {
  name: "backoff-limit-per-index",
  type: "string",
  value: "<n>",
  help: "retries of a failed index (default: 3)",
  parse: (v, label) => {
    if (!/^\d+$/.test(v)) {
      throw new PenguinError("usage", `${label} must be a non-negative integer, got "${v}"`);
    }
    return Number(v);
  },
};
const STORAGE: Flag = {
  name: "storage",
  type: "string",
  value: "<size>",
  help: "size of the data volume claim (default: 20Gi)",
};
const CONFINEMENT: Flag<Confinement> = {
  name: "confinement",
  type: "string",
  value: "<how>",
  help: "user-namespaces (default: hostUsers: false) or\n" +
    "unconfined-profiles (seccomp and AppArmor Unconfined)",
  choices: CONFINEMENTS,
  parse: (v, label) => {
    if ((CONFINEMENTS as readonly string[]).includes(v)) return v as Confinement;
    throw new PenguinError(
      "usage",
      `${label} must be one of ${CONFINEMENTS.join(", ")}, got "${v}"`,
    );
  },
};

const FLAGS: readonly Flag<unknown>[] = [
  IMAGE,
  PARALLELISM,
  SHARDS,
  NAMESPACE,
  NAME,
  {
    ...PROVIDER,
    help:
      "model provider group configured in each pod (with --model-id;\nthe default model of tasks that name none)",
  },
  { ...MODEL_ID, help: "model id configured in each pod (with --provider)" },
  SECRET,
  OTLP,
  POD_PARALLEL,
  BACKOFF,
  STORAGE,
  CONFINEMENT,
];

const HELP = `Usage: penguin batch k8s <tasks> --image <ref> [--parallelism <p>] [--shards <n>]
                         [--namespace <ns>] [flags]

Print the Kubernetes manifests that run a task file across a cluster as an
Indexed Job: a ConfigMap with the tasks, a ReadWriteMany PersistentVolumeClaim
for the pods' data roots, and the Job (completionMode: Indexed, completions =
shards, backoffLimitPerIndex, a podFailurePolicy that does not count
disruptions). Pod i runs "penguin sandbox check", configures the model pairs
the tasks name (keys from the Secret, by reference: no key is ever printed),
then "penguin batch run <tasks> --shards n --index i". Each index keeps its
data root, results file and workspaces in its own directory of the claim, so
a retried pod resumes its index's interrupted sessions.

bubblewrap needs user namespaces in the pod: --confinement user-namespaces
asks for a user-namespaced pod (hostUsers: false, Kubernetes 1.33+ or the
UserNamespacesSupport feature); unconfined-profiles sets the container's
seccomp and AppArmor profiles to Unconfined instead. A pod that cannot
confine commands fails at "penguin sandbox check" with the reason.
See docs/fleet.md.

Flags:
${flagHelp(FLAGS, 32)}

Example:
  penguin batch k8s tasks.yaml --image registry.example/penguin:0.1.0 \\
    --provider deepseek --model-id deepseek-v4-flash --shards 50 | kubectl apply -f -
`;

function modelsOf(
  tasks: ReturnType<typeof parseTaskFile>,
  first: { provider: string; modelId: string } | undefined,
): { provider: string; modelId: string }[] {
  const out = first ? [first] : [];
  for (const t of tasks) {
    if (t.provider === undefined || t.model_id === undefined) continue;
    if (!out.some((m) => m.provider === t.provider && m.modelId === t.model_id)) {
      out.push({ provider: t.provider, modelId: t.model_id });
    }
  }
  return out;
}

async function run(args: string[], ctx: CommandContext): Promise<number> {
  const p = parseDeclared("batch k8s", args, FLAGS, 1);
  const file = p.positionals[0];
  if (file === undefined) throw new PenguinError("usage", "batch k8s: give the task file");
  const image = flagValue(p, IMAGE);
  if (image === undefined || !/^\S+$/.test(image)) {
    throw new PenguinError("usage", "batch k8s: --image <ref> is required (no blanks)");
  }
  const provider = flagValue(p, PROVIDER);
  const modelId = flagValue(p, MODEL_ID);
  if ((provider === undefined) !== (modelId === undefined)) {
    throw new PenguinError("usage", "batch k8s: --provider and --model-id go together");
  }
  const text = await readBatchInput(
    file,
    "batch k8s: cannot read the task file",
    CONFIGMAP_MAX,
    "usage",
    `it is over ${CONFIGMAP_MAX} bytes, more than a ConfigMap holds; split it`,
  );
  if (text === undefined) {
    throw new PenguinError("usage", `batch k8s: cannot read the task file "${file}": no such file`);
  }
  // Validated as the pods will read it.
  const tasks = parseTaskFile(file, text, { workspaceRoot: `${POD_PATHS.dataDir}/work` });
  const models = modelsOf(tasks, provider ? { provider, modelId: modelId! } : undefined);
  if (models.length === 0 || (!provider && tasks.some((t) => t.provider === undefined))) {
    throw new PenguinError(
      "usage",
      "batch k8s: each pod starts with an empty data root: name the default model with " +
        "--provider and --model-id (or a pair in every task)",
    );
  }
  const ns = flagValue(p, NAMESPACE);
  const otlp = flagValue(p, OTLP);
  const manifests = k8sManifests({
    tasksFile: file,
    tasksText: text,
    image,
    shards: flagValue(p, SHARDS) ?? Math.min(tasks.length, 100),
    parallelism: flagValue(p, PARALLELISM) ?? 10,
    podParallel: flagValue(p, POD_PARALLEL) ?? 1,
    ...(ns !== undefined ? { namespace: ns } : {}),
    name: dnsLabel(flagValue(p, NAME) ?? `penguin-${basename(file).replace(/\.[^.]*$/, "")}`),
    secret: flagValue(p, SECRET) ?? "penguin-provider-keys",
    ...(otlp !== undefined ? { otlpEndpoint: otlp } : {}),
    models,
    backoffLimitPerIndex: flagValue(p, BACKOFF) ?? 3,
    storage: flagValue(p, STORAGE) ?? "20Gi",
    confinement: flagValue(p, CONFINEMENT) ?? "user-namespaces",
  });
  ctx.io.out(
    manifests.map((m) => stringify(m, { lineWidth: 0, aliasDuplicateObjects: false })).join(
      "---\n",
    ),
  );
  return 0;
}

/** `batch k8s`. */
export const batchK8sCommand: Command = {
  path: ["batch", "k8s"],
  summary: "print the Kubernetes Indexed Job that runs a task file",
  help: HELP,
  run,
};
