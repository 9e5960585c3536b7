/**
 * A faithful openshift-tests-extension binary whose tests simulate networking e2e tests.
 *
 * The generator (build-sample-binaries.ts) embeds this function's source plus a suite definition
 * into one self-contained executable script, so the binary has no dependencies beyond Node and
 * runs whether Node treats it as CommonJS or as an ES module (builtins load with import()).
 *
 * Determinism: SAMPLE_EXT_SEED fixes the outcomes; each (test, iteration, attempt, arm) draws its
 * own number, so iterations differ from each other but reruns with the same seed repeat exactly.
 * SAMPLE_EXT_TIME_SCALE multiplies durations (0 makes tests instant).
 *
 * As openshift-tests-extension binaries do: `info` advertises suites with parents and CEL
 * qualifiers; `list` honours the environment flags (--platform=aws, --network ovn, …): with none it
 * lists every test, otherwise a test's exclude condition drops it and its include condition must
 * hold. Tests may carry resources.isolation, report details[] and write into EXTENSION_ARTIFACT_DIR.
 *
 * Outcomes follow the cluster under test: suite.clusterEffects say how a component build changes a
 * test (the PR build of ovn-kubernetes makes the NodePort test flaky). With KUBECONFIG set, a
 * binary that has such a test reads, with plain Node https, which build the cluster runs (the
 * component's workload, e.g. the ovnkube-node DaemonSet, annotated io.openshift.build.commit.id);
 * a cluster it cannot reach fails every test it runs, as e2e tests fail on a lost cluster.
 * Without KUBECONFIG it behaves as if the cluster ran the binary's own component build.
 */
export async function sampleExtensionMain(suite) {
  const { createHash } = await import("node:crypto");
  const { setTimeout: sleep } = await import("node:timers/promises");
  const env = process.env;
  const out = (line) => process.stdout.write(line + "\n");
  const timestamp = (date) => {
    const iso = date.toISOString();
    return `${iso.slice(0, 10)} ${iso.slice(11, 23)}000 UTC`;
  };
  const draw = (...parts) => {
    const digest = createHash("sha256").update(parts.join("\u0000")).digest();
    return digest.readUInt32BE(0) / 2 ** 32;
  };
  const seed = env.SAMPLE_EXT_SEED ?? String(Math.random());
  const timeScale = env.SAMPLE_EXT_TIME_SCALE === undefined ? 1 : Number(env.SAMPLE_EXT_TIME_SCALE);
  const source = `openshift:payload:${suite.component}`;
  // An environment condition { flag: value, … } as the CEL the real binaries advertise.
  const cel = (condition) =>
    Object.entries(condition)
      .map(([key, value]) => `${key}==${JSON.stringify(value)}`)
      .join(" && ");
  const specOf = (test) => ({
    name: test.name,
    labels: Object.fromEntries((test.labels ?? []).map((l) => [l, {}])),
    resources: { isolation: test.isolation ?? {} },
    source,
    lifecycle: test.lifecycle ?? "blocking",
    environmentSelector: {
      ...(test.environment?.include ? { include: cel(test.environment.include) } : {}),
      ...(test.environment?.exclude ? { exclude: cel(test.environment.exclude) } : {}),
    },
  });

  const [command, ...rest] = process.argv.slice(2);
  const format = rest[rest.indexOf("-o") + 1] ?? "json";
  // Environment flags, as --name=value or --name value (pflag accepts both).
  const ENVIRONMENT_FLAGS = {
    platform: "platform",
    network: "network",
    "network-stack": "networkStack",
    architecture: "architecture",
    topology: "topology",
    upgrade: "upgrade",
    version: "version",
    "external-connectivity": "externalConnectivity",
  };
  const LIST_FLAGS = ["optional-capability", "fact", "api-group", "feature-gate"];
  const environment = {};
  for (let i = 0; i < rest.length; i++) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(rest[i]);
    if (!match || !(match[1] in ENVIRONMENT_FLAGS || LIST_FLAGS.includes(match[1]))) continue;
    const value = match[2] ?? rest[++i] ?? "";
    if (match[1] in ENVIRONMENT_FLAGS) environment[ENVIRONMENT_FLAGS[match[1]]] = value;
    else environment[match[1]] = [...(environment[match[1]] ?? []), value];
  }
  // As FilterByEnvironment: no flags lists everything; exclude wins; include must match when set.
  const matches = (condition) =>
    Object.entries(condition).every(([key, value]) => environment[key] === value);
  const admitted = (test) =>
    Object.keys(environment).length === 0 ||
    ((!test.environment?.exclude || !matches(test.environment.exclude)) &&
      (!test.environment?.include || matches(test.environment.include)));
  const quote = JSON.stringify;
  const defaultSuites = [
    { name: `openshift/${suite.component}/network-stress`, qualifiers: [`source == ${quote(source)}`] },
    {
      name: `${suite.component}/conformance/parallel`,
      parents: ["openshift/conformance/parallel"],
      qualifiers: [
        `source == ${quote(source)} && name.contains("[Suite:openshift/conformance/parallel]") && !name.contains("[Serial]") && !name.contains("[Disruptive]")`,
      ],
    },
    {
      name: `${suite.component}/conformance/serial`,
      parents: ["openshift/conformance/serial"],
      qualifiers: [
        `source == ${quote(source)} && name.contains("[Serial]") && !name.contains("[Disruptive]")`,
      ],
    },
    {
      name: `${suite.component}/disruptive`,
      parents: ["openshift/disruptive"],
      qualifiers: [`source == ${quote(source)} && name.contains("[Disruptive]")`],
    },
  ];

  if (command === "info") {
    out(
      JSON.stringify(
        {
          apiVersion: "v1.1",
          source: {
            commit: suite.commit,
            build_date: suite.buildDate,
            git_tree_state: suite.gitTreeState ?? "clean",
          },
          component: { product: "openshift", type: "payload", name: suite.component },
          suites: suite.suites ?? defaultSuites,
        },
        null,
        2,
      ),
    );
    return;
  }

  // A suite without images plays a binary built before the framework had the command.
  if (command === "images" && suite.images) {
    out(JSON.stringify(suite.images));
    return;
  }

  if (command === "list") {
    const specs = suite.tests.filter(admitted).map(specOf);
    if (format === "jsonl") specs.forEach((s) => out(JSON.stringify(s)));
    else out(JSON.stringify(specs, null, 2));
    return;
  }

  if (command === "run-test") {
    const names = [];
    for (let i = 0; i < rest.length; i++) if (rest[i] === "-n" || rest[i] === "--name") names.push(rest[++i]);
    if (names.length === 0) {
      // Like the real binaries: no -n means names arrive on stdin, one per line.
      let input = "";
      for await (const chunk of process.stdin) input += chunk;
      names.push(...input.split("\n").filter((n) => n.trim() !== ""));
    }
    const tests = names.map((name) => {
      const test = suite.tests.find((t) => t.name === name);
      if (!test) {
        process.stderr.write(`error: no test named ${JSON.stringify(name)}\n`);
        process.exit(1);
      }
      return test;
    });
    const cluster = await clusterUnderTest();
    for (const test of tests) await runOne(test, cluster);
    return;
  }

  process.stderr.write(
    `usage: ${suite.component}-tests-ext info | list -o jsonl | run-test -n NAME -o jsonl\n`,
  );
  process.exit(2);

  // Which build of each component the cluster under test runs, as far as this binary's tests care.
  async function clusterUnderTest() {
    const effects = (suite.clusterEffects ?? []).filter((e) => suite.tests.some((t) => t.name === e.test));
    if (!env.KUBECONFIG)
      return { builds: { [suite.component]: suite.commit }, source: "this binary's own build" };
    if (effects.length === 0) return { builds: {} };
    const { readFile } = await import("node:fs/promises");
    let text;
    try {
      text = await readFile(env.KUBECONFIG, "utf8");
    } catch (error) {
      return { error: `cannot read KUBECONFIG ${env.KUBECONFIG}: ${error.message}` };
    }
    // The first cluster and user of the file: an admin kubeconfig has one of each.
    const field = (name) => new RegExp(`^[\\s-]*${name}:\\s*["']?([^"'\\s]+)["']?\\s*$`, "m").exec(text)?.[1];
    const server = field("server");
    if (!server) return { error: `KUBECONFIG ${env.KUBECONFIG} names no server` };
    const token = field("token");
    const ca = field("certificate-authority-data");
    const insecure = field("insecure-skip-tls-verify") === "true";
    const get = async (path) => {
      const url = new URL(path, server);
      const { request } = await import(url.protocol === "https:" ? "node:https" : "node:http");
      return new Promise((resolve, reject) => {
        const req = request(
          url,
          {
            headers: { accept: "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
            ...(ca ? { ca: Buffer.from(ca, "base64").toString("utf8") } : {}),
            rejectUnauthorized: !insecure,
            timeout: 10_000,
          },
          (res) => {
            let body = "";
            res.setEncoding("utf8");
            res.on("data", (chunk) => (body += chunk));
            res.on("end", () => resolve({ status: res.statusCode, body }));
          },
        );
        req.on("timeout", () => req.destroy(new Error("no answer in 10s")));
        req.on("error", reject);
        req.end();
      });
    };
    const builds = {};
    const images = {};
    for (const effect of effects) {
      if (effect.component in builds) continue;
      const { namespace, name } = effect.workload;
      const path = `/apis/apps/v1/namespaces/${namespace}/daemonsets/${name}`;
      let answer;
      try {
        answer = await get(path);
      } catch (error) {
        return { error: `cannot reach the cluster under test at ${server}: ${error.message}` };
      }
      if (answer.status === 404) continue;
      if (answer.status !== 200) return { error: `GET ${path} on ${server}: HTTP ${answer.status}` };
      const workload = JSON.parse(answer.body);
      builds[effect.component] = workload.metadata?.annotations?.["io.openshift.build.commit.id"];
      images[effect.component] = workload.spec?.template?.spec?.containers?.[0]?.image;
    }
    return { builds, images, source: server };
  }

  async function runOne(test, cluster) {
    const iteration = env.NETSTRESS_ITERATION ?? "";
    const attempt = env.NETSTRESS_ATTEMPT ?? "0";
    const arm = env.NETSTRESS_ARM ?? "";
    const start = new Date();
    const [minMs, maxMs] = test.durationMs ?? [50, 200];
    const duration =
      (minMs + draw(seed, test.name, iteration, attempt, arm, "duration") * (maxMs - minMs)) * timeScale;
    out(`I${start.toISOString()} STEP: creating test namespace e2e-${suite.component}-${iteration}`);
    /** A result decided before the test would run: it ends now. */
    const reportNow = (fields) => {
      const end = new Date();
      out(
        JSON.stringify({
          name: test.name,
          lifecycle: test.lifecycle ?? "blocking",
          duration: end.getTime() - start.getTime(),
          startTime: timestamp(start),
          endTime: timestamp(end),
          ...fields,
        }),
      );
    };
    if (cluster.error) {
      reportNow({ result: "failed", output: cluster.error, error: cluster.error });
      return;
    }
    const effect = (suite.clusterEffects ?? []).find(
      (e) => e.test === test.name && e.commit !== undefined && cluster.builds[e.component] === e.commit,
    );
    if (effect) {
      const image = cluster.images?.[effect.component];
      out(
        `I${start.toISOString()} STEP: the cluster runs ${effect.component} ${image ?? effect.commit} (${cluster.source})`,
      );
      test = { ...test, ...effect.changes };
    }

    let watched = false;
    switch (test.behavior) {
      case "invariant":
      case "invariant-sigterm-only":
      case "invariant-stuck": {
        const { existsSync } = await import("node:fs");
        const stopFile = test.behavior === "invariant" ? env.NETSTRESS_INVARIANT_STOP_FILE : undefined;
        let terminated = false;
        process.on("SIGTERM", () => {
          terminated = test.behavior !== "invariant-stuck";
        });
        // Told nothing about a stop, a monitor watches for its default duration.
        const until = env.NETSTRESS_INVARIANT_STOP_FILE
          ? Infinity
          : Date.now() + Number(env.NETSTRESS_INVARIANT_DURATION_SECONDS ?? 60) * 1000 * timeScale;
        if (stopFile && env.NETSTRESS_INVARIANT_READY_FILE) {
          const { writeFile } = await import("node:fs/promises");
          await writeFile(env.NETSTRESS_INVARIANT_READY_FILE, "watching\n");
        }
        while (!terminated && !(stopFile && existsSync(stopFile)) && Date.now() < until) await sleep(20);
        watched = true;
        break;
      }
      case "upgrade": {
        // As the network extension's upgrade test: nothing to upgrade to is a skip with the reason.
        const target = env.NETSTRESS_UPGRADE_TARGET;
        reportNow({
          result: target ? "passed" : "skipped",
          output: target
            ? `upgraded the cluster to ${target}`
            : "NETSTRESS_UPGRADE_TARGET is not set: name the release pullspec to upgrade to",
        });
        return;
      }
      case "crash":
        process.stderr.write("panic: runtime error: invalid memory address or nil pointer dereference\n");
        process.exit(2);
        break;
      case "hang":
        await sleep(3_600_000);
        break;
      case "garbage":
        out('{"name": "' + test.name + '", "result": "passed", "dur');
        return;
      case "no-result":
        return;
      case "flood": {
        const line = "x".repeat(1023) + "\n";
        for (let i = 0; i < (test.floodMiB ?? 64) * 1024; i++) {
          if (!process.stdout.write(line)) await new Promise((r) => process.stdout.once("drain", r));
        }
        break;
      }
      case "malformed":
        out(JSON.stringify({ name: test.name, result: "maybe", duration: "soon" }));
        return;
      case "wrong-name":
        // A binary that renames its tests: the result names a test nobody asked for.
        out(
          JSON.stringify({
            name: `${test.name} [renamed]`,
            lifecycle: "blocking",
            duration: 1,
            result: "passed",
            output: "",
          }),
        );
        return;
      default:
        break;
    }

    if (!watched) await sleep(duration);
    const failed = draw(seed, test.name, iteration, attempt, arm, "outcome") < (test.failureProbability ?? 0);
    const skipped =
      !failed && draw(seed, test.name, iteration, attempt, arm, "skip") < (test.skipProbability ?? 0);
    out(`I${new Date().toISOString()} STEP: checking connectivity (${test.name.slice(0, 40)}…)`);
    const end = new Date();
    if (test.artifact && env.EXTENSION_ARTIFACT_DIR) {
      const { mkdir, writeFile } = await import("node:fs/promises");
      const { join } = await import("node:path");
      await mkdir(env.EXTENSION_ARTIFACT_DIR, { recursive: true });
      const file = `${test.artifact}-${arm || "arm"}-${iteration || 0}-${attempt}.txt`;
      await writeFile(join(env.EXTENSION_ARTIFACT_DIR, file), `${test.name}\n`);
    }
    const millis = end.getTime() - start.getTime();
    const result = {
      name: test.name,
      lifecycle: test.lifecycle ?? "blocking",
      // OTE's subprocess fallback reports a Go time.Duration: nanoseconds.
      duration: test.behavior === "nanoseconds" ? millis * 1e6 + 123_456 : millis,
      startTime: timestamp(start),
      endTime: timestamp(end),
      result: failed ? "failed" : skipped ? "skipped" : "passed",
      output: failed
        ? (test.failureOutput ?? "connection timed out")
        : skipped
          ? "skipped: not applicable"
          : "",
      ...(failed ? { error: test.failureError ?? "Expected connectivity, got timeout after 30s" } : {}),
      ...(test.details ? { details: test.details } : {}),
    };
    out(JSON.stringify(result));
  }
}
