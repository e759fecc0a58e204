// `penguin batch k8s`: the printed manifests validate against the Kubernetes
// schemas (kubernetes-models, tests only) and keep the Indexed Job contract.
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { PersistentVolumeClaim } from "kubernetes-models/v1/PersistentVolumeClaim";
import { Job } from "kubernetes-models/batch/v1/Job";
import { runCli } from "../support/cli.ts";
import { withTempDir } from "../support/roots.ts";

const SECRET_VALUE = "sk-batch-k8s-test-secret-value";

const VALIDATORS: Record<string, (o: unknown) => { validate(): void }> = {
  ConfigMap: (o) => new ConfigMap(o as ConstructorParameters<typeof ConfigMap>[0]),
  PersistentVolumeClaim: (o) =>
    new PersistentVolumeClaim(o as ConstructorParameters<typeof PersistentVolumeClaim>[0]),
  Job: (o) => new Job(o as ConstructorParameters<typeof Job>[0]),
};

// deno-lint-ignore no-explicit-any
type Obj = any;

/** What `batch k8s` prints for seven tasks on (deepseek, `modelId`) with `extra` flags. */
async function manifests(dir: string, modelId: string, extra: string[]): Promise<Obj[]> {
  const tasks = join(dir, "sweep.yaml");
  await Deno.writeTextFile(
    tasks,
    "defaults: {max_turns: 20}\ntasks:\n" +
      Array.from({ length: 7 }, (_, i) => `  - {id: t${i}, prompt: "fix ${i}", workspace: w${i}}\n`)
        .join(""),
  );
  const r = await runCli([
    "batch",
    "k8s",
    tasks,
    "--image",
    "registry.example/penguin:0.1.0",
    "--provider",
    "deepseek",
    "--model-id",
    modelId,
    ...extra,
  ], {
    env: { DEEPSEEK_API_KEY: SECRET_VALUE },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!r.stdout.includes(SECRET_VALUE), "no key value in the output");
  const docs = parseAllDocuments(r.stdout);
  assert.ok(Array.isArray(docs));
  return docs.map((d) => {
    assert.deepEqual(d.errors, []);
    return d.toJS();
  });
}

Deno.test("batch k8s prints a ConfigMap, a claim and an Indexed Job that validate against the schemas", async () => {
  await withTempDir("penguin-k8s-", async (dir) => {
    const objs = await manifests(dir, "deepseek-v4-flash", [
      "--shards",
      "3",
      "--parallelism",
      "2",
      "--namespace",
      "evals",
      "--otlp-endpoint",
      "http://collector.observability:4318",
    ]);
    assert.deepEqual(objs.map((o) => o.kind), ["ConfigMap", "PersistentVolumeClaim", "Job"]);
    for (const o of objs) {
      VALIDATORS[o.kind]!(o).validate();
      assert.equal(o.metadata.namespace, "evals");
    }
    const [cm, pvc, job] = objs;
    assert.equal(cm.data["tasks.yaml"], await Deno.readTextFile(join(dir, "sweep.yaml")));
    assert.deepEqual(pvc.spec.accessModes, ["ReadWriteMany"]);
    const spec = job.spec;
    assert.equal(spec.completionMode, "Indexed");
    assert.equal(spec.completions, 3);
    assert.equal(spec.parallelism, 2);
    assert.equal(spec.backoffLimitPerIndex, 3);
    assert.deepEqual(spec.podFailurePolicy.rules[0], {
      action: "Ignore",
      onPodConditions: [{ type: "DisruptionTarget", status: "True" }],
    });
    const pod = spec.template.spec;
    assert.equal(pod.restartPolicy, "Never");
    assert.equal(pod.hostUsers, false);
    const c = pod.containers[0];
    const script: string = c.command.at(-1);
    assert.match(script, /^set -e\npenguin sandbox check\n/);
    assert.match(script, /--provider 'deepseek' --model-id 'deepseek-v4-flash' --set-default/);
    assert.match(
      script,
      /exec penguin batch run '\/etc\/penguin\/tasks\.yaml' --shards 3 --index "\$JOB_COMPLETION_INDEX"/,
    );
    assert.deepEqual(c.envFrom, [{ secretRef: { name: "penguin-provider-keys" } }]);
    assert.ok(
      c.env.every((e: Obj) => e.name !== "DEEPSEEK_API_KEY"),
      "keys only by reference",
    );
    assert.ok(
      c.env.some((e: Obj) =>
        e.name === "OTEL_EXPORTER_OTLP_ENDPOINT" &&
        e.value === "http://collector.observability:4318"
      ),
    );
    assert.ok(c.resources.requests.cpu && c.resources.limits.memory);
    const data = c.volumeMounts.find((m: Obj) => m.name === "data");
    assert.equal(data.subPathExpr, "index-$(JOB_COMPLETION_INDEX)");
    assert.equal(
      pod.volumes.find((v: Obj) => v.name === "data").persistentVolumeClaim.claimName,
      pvc.metadata.name,
    );
    assert.equal(
      pod.volumes.find((v: Obj) => v.name === "tasks").configMap.name,
      cm.metadata.name,
    );
    // The validator is live: a wrong value is refused.
    assert.throws(() =>
      VALIDATORS.Job!({ ...job, spec: { ...spec, completionMode: "Sequential" } }).validate()
    );
  });
});

Deno.test("batch k8s: unconfined-profiles sets seccomp and AppArmor instead of hostUsers; bad input is refused", async () => {
  await withTempDir("penguin-k8s-", async (dir) => {
    const objs = await manifests(dir, "m", [
      "--confinement",
      "unconfined-profiles",
    ]);
    for (const o of objs) VALIDATORS[o.kind]!(o).validate();
    const job = objs[2];
    assert.equal(job.spec.completions, 7, "one shard per task by default");
    const pod = job.spec.template.spec;
    assert.equal(pod.hostUsers, undefined);
    assert.deepEqual(pod.containers[0].securityContext.seccompProfile, { type: "Unconfined" });
    assert.deepEqual(pod.containers[0].securityContext.appArmorProfile, { type: "Unconfined" });

    const noModel = await runCli(["batch", "k8s", join(dir, "sweep.yaml"), "--image", "x"]);
    assert.equal(noModel.code, 2);
    assert.match(noModel.stderr, /name the default model with --provider and --model-id/);
    await Deno.writeTextFile(join(dir, "bad.yaml"), "tasks:\n  - {id: a, prompt: p}\n");
    const bad = await runCli(["batch", "k8s", join(dir, "bad.yaml"), "--image", "x"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /bad\.yaml:2: tasks\[0\]\.workspace: /);
  });
});
