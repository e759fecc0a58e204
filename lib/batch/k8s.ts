/**
 * The Kubernetes manifests of a batch (`penguin batch k8s`): a ConfigMap
 * with the task file, a ReadWriteMany PersistentVolumeClaim for the pods'
 * data roots, and an Indexed Job whose pod `i` runs shard `i` of `shards`.
 *
 * Choices the manifests make:
 * - `completionMode: Indexed`, `completions` = shards, `backoffLimitPerIndex`
 *   (a failed index is retried on its own), and a `podFailurePolicy` that
 *   ignores disruptions (`DisruptionTarget`: preemption, eviction, node
 *   drain do not count as failures) and fails an index at once on exit 2
 *   (a usage error no retry can fix).
 * - Each index keeps its data root (traces, results file, workspaces) in its
 *   own sub-directory of the claim (`subPathExpr`), so a retried pod of the
 *   same index finds its predecessor's results and resumes its sessions.
 * - Provider keys come from a Secret by reference (`envFrom`); no key value
 *   is ever part of the output.
 * - The pod runs `penguin sandbox check` first, so a node that cannot
 *   confine commands fails the pod early with the reason; the confinement
 *   options are user-namespaced pods (`hostUsers: false`) or unconfined
 *   seccomp and AppArmor profiles for the container.
 *
 * @module
 */

/** How bubblewrap gets its user namespaces in the pod. */
export type Confinement = "user-namespaces" | "unconfined-profiles";

/** The confinement options, in help order. */
export const CONFINEMENTS: readonly Confinement[] = ["user-namespaces", "unconfined-profiles"];

/** What {@linkcode k8sManifests} builds from. */
export interface K8sOptions {
  /** The task file's path (its base name is the ConfigMap key). */
  tasksFile: string;
  /** The task file's text. */
  tasksText: string;
  /** The image reference (built from the Containerfile). */
  image: string;
  /** Indexes of the Job (each runs one shard). */
  shards: number;
  /** Pods at a time. */
  parallelism: number;
  /** Tasks at a time inside a pod (`batch run --parallel`). */
  podParallel: number;
  namespace?: string;
  /** Base name of the objects (a DNS label). */
  name: string;
  /** The Secret whose keys become the pods' environment (provider keys). */
  secret: string;
  /** The OTLP/HTTP endpoint of the fleet's collector. */
  otlpEndpoint?: string;
  /** Model pairs to configure in each pod's data root; the first is the default. */
  models: { provider: string; modelId: string }[];
  /** Retries per index. */
  backoffLimitPerIndex: number;
  /** Size of the data claim, e.g. `50Gi`. */
  storage: string;
  confinement: Confinement;
}

/** A Kubernetes object. */
export type Manifest = Record<string, unknown> & { apiVersion: string; kind: string };

/** Where the pod mounts things. */
export const POD_PATHS = {
  tasksDir: "/etc/penguin",
  dataDir: "/var/lib/penguin",
} as const;

/** The ConfigMap key (and file name in the pod) of the task file. */
export function tasksKey(tasksFile: string): string {
  return /\.(jsonl|ndjson)$/i.test(tasksFile) ? "tasks.jsonl" : "tasks.yaml";
}

/** A DNS label from `text`: lower case, `[a-z0-9-]`, at most `max` characters. */
export function dnsLabel(text: string, max = 50): string {
  const s = text.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "");
  return s.slice(0, max).replace(/-+$/, "") || "batch";
}

/** `value` quoted for a POSIX shell. */
function sq(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** The pod's script: check the sandbox, configure the models, run the shard. */
export function podScript(o: K8sOptions): string {
  const d = POD_PATHS.dataDir;
  const tasks = `${POD_PATHS.tasksDir}/${tasksKey(o.tasksFile)}`;
  const lines = ["set -e", "penguin sandbox check"];
  o.models.forEach((m, i) => {
    lines.push(
      `penguin config model add --provider ${sq(m.provider)} --model-id ${sq(m.modelId)}` +
        (i === 0 ? " --set-default" : "") + " >/dev/null",
    );
  });
  lines.push(
    `exec penguin batch run ${sq(tasks)} --shards ${o.shards} --index "$JOB_COMPLETION_INDEX"` +
      ` --parallel ${o.podParallel} --results ${d}/results.jsonl --workspace-root ${d}/work`,
  );
  return lines.join("\n") + "\n";
}

function podSecurity(
  o: K8sOptions,
): { pod: Record<string, unknown>; container: Record<string, unknown> } {
  const container = { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } };
  // The image's unprivileged user (Containerfile); fsGroup makes the claim writable to it.
  const user = { securityContext: { runAsNonRoot: true, runAsUser: 10001, fsGroup: 10001 } };
  if (o.confinement === "user-namespaces") {
    return { pod: { ...user, hostUsers: false }, container };
  }
  return {
    pod: user,
    container: {
      ...container,
      seccompProfile: { type: "Unconfined" },
      appArmorProfile: { type: "Unconfined" },
    },
  };
}

function job(
  o: K8sOptions,
  meta: Record<string, unknown>,
  labels: Record<string, string>,
): Manifest {
  const sec = podSecurity(o);
  const env = [
    {
      name: "JOB_COMPLETION_INDEX",
      valueFrom: {
        fieldRef: { fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']" },
      },
    },
    { name: "PENGUIN_HOME", value: `${POD_PATHS.dataDir}/data` },
    ...(o.otlpEndpoint !== undefined
      ? [{ name: "OTEL_EXPORTER_OTLP_ENDPOINT", value: o.otlpEndpoint }]
      : []),
  ];
  const cpu = String(o.podParallel);
  return {
    apiVersion: "batch/v1",
    kind: "Job",
    metadata: { ...meta, name: o.name },
    spec: {
      completionMode: "Indexed",
      completions: o.shards,
      parallelism: Math.min(o.parallelism, o.shards),
      backoffLimitPerIndex: o.backoffLimitPerIndex,
      podFailurePolicy: {
        rules: [
          { action: "Ignore", onPodConditions: [{ type: "DisruptionTarget", status: "True" }] },
          {
            action: "FailIndex",
            onExitCodes: { containerName: "penguin", operator: "In", values: [2] },
          },
        ],
      },
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: "Never",
          ...sec.pod,
          containers: [{
            name: "penguin",
            image: o.image,
            command: ["/bin/sh", "-c", podScript(o)],
            env,
            envFrom: [{ secretRef: { name: o.secret } }],
            resources: {
              requests: { cpu, memory: `${512 * o.podParallel}Mi` },
              limits: { memory: `${1024 * o.podParallel}Mi` },
            },
            securityContext: sec.container,
            volumeMounts: [
              { name: "tasks", mountPath: POD_PATHS.tasksDir, readOnly: true },
              {
                name: "data",
                mountPath: POD_PATHS.dataDir,
                subPathExpr: "index-$(JOB_COMPLETION_INDEX)",
              },
            ],
          }],
          volumes: [
            { name: "tasks", configMap: { name: `${o.name}-tasks` } },
            { name: "data", persistentVolumeClaim: { claimName: `${o.name}-data` } },
          ],
        },
      },
    },
  };
}

/** The manifests, in apply order: ConfigMap, PersistentVolumeClaim, Job. */
export function k8sManifests(o: K8sOptions): Manifest[] {
  const labels = { "app.kubernetes.io/name": "penguin", "app.kubernetes.io/instance": o.name };
  const meta = { labels, ...(o.namespace !== undefined ? { namespace: o.namespace } : {}) };
  return [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { ...meta, name: `${o.name}-tasks` },
      data: { [tasksKey(o.tasksFile)]: o.tasksText },
    },
    {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { ...meta, name: `${o.name}-data` },
      spec: { accessModes: ["ReadWriteMany"], resources: { requests: { storage: o.storage } } },
    },
    job(o, meta, labels),
  ];
}
