#!/usr/bin/env node
/**
 * An openshift-tests-extension binary that behaves as one built from the upstream framework and
 * Ginkgo does, including where that differs from what a careful client would guess. Written from
 * the framework's documented behaviour (pkg/cmd/cmdrun, pkg/extension/extensiontests, pkg/ginkgo)
 * and Ginkgo v2's interrupt handling; see README.md beside it for the spec set and the knobs.
 *
 * - `run-test` with one name runs the spec in this process (the framework's single-spec path);
 *   with several it runs each in a child `run-test --output=json --timeout=90m0s NAME`, and a child
 *   whose output does not parse becomes a `failed` result whose `duration` is in NANOSECONDS
 *   (SpawnProcessToRunTest's fallback), `output` "STDOUT:\n…\n\nSTDERR:\n…".
 * - The first SIGINT or SIGTERM interrupts the running spec: its cleanups (DeferCleanup/AfterEach)
 *   run, then it is reported `failed`, "Interrupted by User", a progress report in its output, and
 *   the binary exits 1. A second one exits 130 at once ("Interrupted twice"). SIGABRT is Go's:
 *   a goroutine dump on stderr and exit 2, no result. With several names, an interrupt kills the
 *   children (exec.CommandContext on the cancelled context) and each gets the fallback result.
 * - Ginkgo specs take their lifecycle from a `Lifecycle:informing` label (default blocking);
 *   hand-built specs (the framework's non-Ginkgo builders) have `"lifecycle": ""`, in `list` and in
 *   their results alike.
 */
import { closeSync, fstatSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";

const MODULE = "github.com/openshift/ginkgo-ext";
const SOURCE = "openshift:payload:ginkgo-ext";
const env = process.env;
const cleanupMs = Number(env.GINKGO_EXT_CLEANUP_MS ?? 500);
const hugeMiB = Number(env.GINKGO_EXT_HUGE_MIB ?? 9.5);
const NANOS_PER_SECOND = 1_000_000_000;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const never = () => new Promise(() => setInterval(() => {}, 60_000));

// --- The spec set --------------------------------------------------------------------------------

/** `kind` says what the spec does when run; see run(). */
const specs = [];
const ginkgo = (name, kind, line, extra = {}) =>
  specs.push({
    name,
    kind,
    codeLocations: [`/go/src/${MODULE}/test/e2e/${extra.file ?? "network.go"}:${line}`],
    ...extra,
  });

for (let i = 1; i <= 94; i++) {
  const port = String(8000 + i);
  ginkgo(
    `[sig-network] ginkgo-ext endpoints answer on port ${port} [Suite:openshift/conformance/parallel]`,
    "pass",
    40 + i,
    {
      file: "endpoints.go",
    },
  );
}
for (let i = 1; i <= 6; i++) {
  ginkgo(
    `[sig-network] ginkgo-ext endpoints wait for a backend that never starts ${i} [Suite:openshift/conformance/parallel]`,
    "hang",
    150 + i,
    {
      file: "endpoints.go",
    },
  );
}
ginkgo("[sig-network] ginkgo-ext service fails its connectivity check", "fail", 210);
ginkgo("[sig-network] ginkgo-ext service is skipped without IPv6 [Feature:IPv6]", "skip", 230);
ginkgo("[sig-network] ginkgo-ext informing probe fails [Lifecycle:informing]", "fail", 250, {
  labels: ["Lifecycle:informing"],
});
ginkgo("[sig-network] ginkgo-ext logs verbosely and passes", "huge", 270);
ginkgo("[sig-network] ginkgo-ext cleanup never finishes after an interrupt", "stuck-cleanup", 290);
ginkgo("[sig-network] ginkgo-ext process crashes", "crash", 310);
ginkgo("[sig-network] ginkgo-ext network policy is enforced after rename", "policy", 330, {
  originalName: "[sig-network] ginkgo-ext network policy enforcement",
  tags: { owner: "sdn" },
});
ginkgo("[sig-network] ginkgo-ext reconfigures the node's MTU [Serial:Self]", "serial-self", 350, {
  labels: ["SLOW"],
});
ginkgo("[sig-network] ginkgo-ext restarts the OVN database [Serial] [Disruptive]", "pass", 370, {
  isolation: { mode: "", conflict: ["ovn-db"] },
});
// Hand-built, as the framework's Cypress builder and hand-written specs are: no Ginkgo labels,
// so no lifecycle at all.
specs.push({ name: "[sig-network] ginkgo-ext console network page loads", kind: "pass", handBuilt: true });
specs.push({ name: "[sig-network] ginkgo-ext console network page fails", kind: "fail", handBuilt: true });

const lifecycleOf = (spec) =>
  spec.handBuilt ? "" : (spec.labels ?? []).includes("Lifecycle:informing") ? "informing" : "blocking";

const listed = (spec) => ({
  name: spec.name,
  ...(spec.originalName ? { originalName: spec.originalName } : {}),
  labels: Object.fromEntries((spec.labels ?? []).map((label) => [label, {}])),
  ...(spec.tags ? { tags: spec.tags } : {}),
  resources: { isolation: spec.isolation ?? {} },
  source: SOURCE,
  ...(spec.codeLocations ? { codeLocations: spec.codeLocations } : {}),
  lifecycle: lifecycleOf(spec),
  environmentSelector: {},
});

const suites = [
  {
    name: "ginkgo-ext/endpoints",
    description: "The endpoint checks, four at a time, three seconds each.",
    parents: ["openshift/conformance/parallel"],
    qualifiers: ['name.contains("ginkgo-ext endpoints")'],
    count: 1,
    parallelism: 4,
    clusterStability: "Stable",
    testTimeout: 3 * NANOS_PER_SECOND,
  },
  {
    name: "ginkgo-ext/hangs",
    description: "Specs that never finish on their own, twice each, two at a time.",
    parents: [],
    qualifiers: ['name.contains("never")'],
    count: 2,
    parallelism: 2,
    clusterStability: "Stable",
    testTimeout: 3 * NANOS_PER_SECOND,
  },
  {
    name: "ginkgo-ext/disruptive",
    description: "Specs that take the cluster's network down.",
    parents: ["openshift/disruptive"],
    qualifiers: ['name.contains("[Disruptive]") || name.contains("[Serial:Self]")'],
    count: 1,
    parallelism: 1,
    clusterStability: "Disruptive",
    testTimeout: 600 * NANOS_PER_SECOND,
  },
];

const images = [
  { index: 0, registry: "quay.io/openshift/community-e2e-images", name: "agnhost", version: "2.53" },
  {
    index: 1,
    registry: "registry.k8s.io/e2e-test-images",
    name: "nginx",
    version: "1.15-4",
    mapped: {
      index: 1,
      registry: "quay.io/openshift/community-e2e-images",
      name: "e2e-1-registry-k8s-io-e2e-test-images-nginx-1-15-4",
      version: "1.15-4",
    },
  },
];

// --- Commands ------------------------------------------------------------------------------------

const out = (text) => process.stdout.write(text + "\n");
const [command, ...args] = process.argv.slice(2);
const flag = (long, short) => {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === `--${long}` || (short && args[i] === `-${short}`)) return args[i + 1];
    if (args[i].startsWith(`--${long}=`)) return args[i].slice(long.length + 3);
  }
  return undefined;
};
const format = flag("output", "o") ?? "json";

// Go installs its signal handlers before any spec runs, so the window without them is short.
const signals = command === "run-test" ? watchSignals() : undefined;

if (command === "info") {
  const info = {
    apiVersion: "v1.1",
    source: {
      commit: env.GINKGO_EXT_COMMIT ?? "4f1c2a9e7b3d5c6a8e0f1b2c3d4e5f6a7b8c9d0e",
      build_date: "2026-11-02T09:14:00Z",
      git_tree_state: "clean",
      source_url: `https://${MODULE}`,
    },
    component: { product: "openshift", type: "payload", name: "ginkgo-ext" },
    suites,
    images,
  };
  out(JSON.stringify(info, null, 4));
} else if (command === "images") {
  out(JSON.stringify(images));
} else if (command === "list") {
  const all = specs.map(listed);
  if (format === "jsonl") all.forEach((spec) => out(JSON.stringify(spec)));
  else out(JSON.stringify(all, null, 2));
} else if (command === "run-test") {
  await runTest();
} else {
  process.stderr.write(`Error: unknown command "${command}" for "ginkgo-tests-ext"\n`);
  process.exit(1);
}

async function runTest() {
  const names = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "-n" || args[i] === "--names") names.push(args[++i]);
    else if (args[i].startsWith("--names=")) names.push(args[i].slice(8));
    else if (args[i] === "-o" || args[i] === "--output" || args[i] === "--timeout" || args[i] === "-c") i++;
    else if (!args[i].startsWith("-")) names.push(args[i]);
  }
  // Names also come from a pipe on stdin; a terminal or /dev/null is not one.
  if (fstatSync(0).isFIFO()) {
    const chunks = [];
    for await (const chunk of process.stdin) chunks.push(chunk);
    names.push(...Buffer.concat(chunks).toString("utf8").split("\n").filter(Boolean));
  }
  if (names.length === 0) fatal("must specify at least one test");
  const interrupt = signals;
  const chosen = names.map(
    (name) => specs.find((spec) => spec.name === name) ?? fatal(`no such test: ${name}`),
  );
  if (format !== "json" && format !== "jsonl") fatal(`unsupported result format: ${format}`);

  const results = [];
  // jsonl results go out as each spec ends; json ones as one array at the end.
  const write = (result) => {
    results.push(result);
    if (format === "jsonl") out(JSON.stringify(result));
  };
  if (chosen.length === 1) write(await runInProcess(chosen[0], interrupt));
  else await runInChildren(chosen, interrupt, write);
  if (format === "json") out(JSON.stringify(results, null, 2));
  const failed = results.filter((r) => r.result === "failed" && r.lifecycle !== "informing");
  if (failed.length > 0) process.stderr.write(`Error: ${failed.length} tests failed\n`);
  // Exits once stdout has taken everything: a pipe takes a many-MiB result line in pieces.
  process.stdout.write("", () => process.exit(failed.length > 0 ? 1 : 0));
}

function fatal(message) {
  process.stderr.write(`Error: ${message}\n`);
  process.exit(1);
}

/** First SIGINT/SIGTERM: resolves `interrupted`; the second exits 130; SIGABRT dumps goroutines. */
function watchSignals() {
  let resolve;
  const state = { interrupted: new Promise((r) => (resolve = r)), received: undefined };
  const onSignal = (signal) => {
    if (state.received) {
      process.stderr.write(`Interrupted twice, exiting (${goSignalName(signal)})`);
      process.exit(130);
    }
    state.received = signal;
    process.stderr.write("Interrupted, terminating tests");
    resolve(signal);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  process.on("SIGABRT", () => {
    process.stderr.write(
      `SIGABRT: abort\nPC=0x47a3c1 m=0 sigcode=0\n\ngoroutine 1 gp=0xc000002380 m=0 mp=0x2c1e660 [running]:\n` +
        `${MODULE}/test/e2e.waitForNamespaceDeletion(...)\n\t/go/src/${MODULE}/test/e2e/network.go:301\n` +
        `\ngoroutine 7 [select]:\nmain.main()\n\t/go/src/${MODULE}/cmd/main.go:44 +0x1d5\n`,
    );
    process.exit(2);
  });
  return state;
}

function goSignalName(signal) {
  return signal === "SIGINT" ? "interrupt" : "terminated";
}

/** 2006-01-02 15:04:05.000000 UTC, as dbtime marshals. */
function dbtime(date) {
  const iso = date.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)}000 UTC`;
}

/** The single-spec path: Ginkgo's RunSpec in this process, then runSpec's fill-ins. */
async function runInProcess(spec, interrupt) {
  const started = new Date();
  const log = [];
  const say = (line) => log.push(`  STEP: ${line} @ ${dbtime(new Date())}`);
  const cleanups = [];
  const location = (spec.codeLocations?.[0] ?? `/go/src/${MODULE}/test/e2e/console.go:12`).replace(
    `/go/src/`,
    "",
  );
  let outcome;
  const body = runBody(spec, say, (fn) => cleanups.push(fn), location);
  const raced = await Promise.race([body, interrupt.interrupted.then(() => "interrupted")]);
  if (raced === "interrupted") {
    const runtime = ((Date.now() - started.getTime()) / 1000).toFixed(3);
    log.push(
      "Interrupted by User",
      "First interrupt received; Ginkgo will run any cleanup and reporting nodes but will skip all remaining specs.  Interrupt again to skip cleanup.",
      "Here's a current progress report:",
      `  ${spec.name} (Spec Runtime: ${runtime}s)`,
      `    ${location}`,
      `    In [It] (Node Runtime: ${runtime}s)`,
      `      ${location}`,
      "",
      "      Spec Goroutine",
      "      goroutine 83 [select]",
      `        ${MODULE}/test/e2e.waitForBackend({0x2d1f0e8, 0xc000a1c0f0}, {0xc0004b2a80, 0x1f})`,
      `          /go/src/${location}`,
    );
    outcome = { result: "failed", error: `fail [${location}]: Interrupted by User` };
  } else {
    outcome = raced;
  }
  // DeferCleanup/AfterEach nodes run whatever happened to the spec.
  for (const cleanup of cleanups.reverse()) await cleanup();
  const ended = new Date();
  return {
    name: spec.name,
    lifecycle: lifecycleOf(spec),
    duration: ended.getTime() - started.getTime(),
    startTime: dbtime(started),
    endTime: dbtime(ended),
    result: outcome.result,
    output: [...log, ...(outcome.output ? [outcome.output] : [])].join("\n"),
    ...(outcome.error ? { error: outcome.error } : {}),
  };
}

async function runBody(spec, say, deferCleanup, location) {
  const deleteNamespace = (ms) => async () => {
    say("Destroying namespace e2e-ginkgo-ext for this suite.");
    await sleep(ms);
    const dir = env.EXTENSION_ARTIFACT_DIR;
    if (dir) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `cleanup-${slug(spec.name)}`), `namespace deleted after ${spec.name}\n`);
    }
  };
  switch (spec.kind) {
    case "pass":
      say("checking the endpoint answers");
      await sleep(20 + (hash(spec.name) % 60));
      return { result: "passed" };
    case "policy": {
      // As e2e helpers that run `oc` in a scratch directory: artifacts still go where they belong.
      say("applying the deny-all policy from a scratch directory");
      const scratch = mkdtempSync(join(tmpdir(), "ginkgo-ext-"));
      process.chdir(scratch);
      const dir = env.EXTENSION_ARTIFACT_DIR;
      if (dir) {
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, "network-policy.yaml"), "kind: NetworkPolicy\nspec:\n  podSelector: {}\n");
      }
      rmSync(scratch, { recursive: true, force: true });
      return { result: "passed" };
    }
    case "fail":
      say("checking connectivity to the service");
      await sleep(30);
      return {
        result: "failed",
        error: `fail [${location}]: Expected\n    <int>: 0\nto equal\n    <int>: 200`,
      };
    case "skip":
      return { result: "skipped", output: ` skip [${location}]: cluster has no IPv6 network\n` };
    case "huge": {
      const line =
        "I1102 09:14:00.000000 1 round_trippers.go:553] GET https://api/ 200 OK in 3 milliseconds\n";
      say("logging every request");
      return { result: "passed", output: line.repeat(Math.ceil((hugeMiB * 1024 * 1024) / line.length)) };
    }
    case "hang":
      deferCleanup(deleteNamespace(cleanupMs));
      say("waiting for the backend to answer");
      return never();
    case "stuck-cleanup":
      deferCleanup(never);
      say("waiting for the backend to answer");
      return never();
    case "crash":
      process.stderr.write(
        `fatal error: concurrent map writes\n\ngoroutine 91 [running]:\n${MODULE}/test/e2e.collectEndpoints(...)\n\t/go/src/${location}\n`,
      );
      process.exit(2);
      break;
    case "serial-self":
      return holdSelfLock(spec, say);
  }
  throw new Error(`unknown spec kind ${spec.kind}`);
}

/** Fails when another copy of this spec holds the node (GINKGO_EXT_LOCK_DIR, when set). */
async function holdSelfLock(spec, say) {
  say("changing the MTU of the node's primary interface");
  const dir = env.GINKGO_EXT_LOCK_DIR;
  if (!dir) {
    await sleep(100);
    return { result: "passed" };
  }
  const lock = join(dir, `${slug(spec.name)}.lock`);
  let fd;
  try {
    fd = openSync(lock, "wx");
  } catch {
    return {
      result: "failed",
      error: "fail [network.go:352]: another copy of this test changed the MTU meanwhile",
    };
  }
  await sleep(300);
  closeSync(fd);
  rmSync(lock, { force: true });
  return { result: "passed" };
}

/** The multi-spec path: a child per spec, as SpawnProcessToRunTest. */
async function runInChildren(chosen, interrupt, write) {
  const concurrency = Number(flag("max-concurrency", "c") ?? 10);
  const queue = [...chosen];
  const children = new Set();
  void interrupt.interrupted.then(() => children.forEach((child) => child.kill("SIGKILL")));
  const worker = async () => {
    for (let spec = queue.shift(); spec; spec = queue.shift()) {
      const result = await spawnForSpec(spec, children);
      result.lifecycle = lifecycleOf(spec);
      result.name = spec.name;
      write(result);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, chosen.length) }, worker));
}

function spawnForSpec(spec, children) {
  const started = process.hrtime.bigint();
  const startDate = new Date();
  const child = spawn(
    process.execPath,
    [process.argv[1], "run-test", "--output=json", "--timeout=90m0s", spec.name],
    {
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.add(child);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolve) => {
    child.on("close", () => {
      children.delete(child);
      try {
        const parsed = JSON.parse(stdout);
        const single = Array.isArray(parsed) ? parsed : [parsed];
        if (single.length === 1 && typeof single[0] === "object" && single[0] !== null)
          return resolve(single[0]);
      } catch {
        // Falls through to the framework's fallback result.
      }
      const ended = new Date();
      const tail = (text) => (text.length < 5000 ? text : text.slice(-5000));
      resolve({
        name: spec.name,
        lifecycle: "",
        // time.Duration, not milliseconds: the fallback writes nanoseconds.
        duration: Number(process.hrtime.bigint() - started),
        startTime: dbtime(startDate),
        endTime: dbtime(ended),
        result: "failed",
        output: `STDOUT:\n${stdout}\n\nSTDERR:\n${stderr}\n`,
        ...(stderr ? { error: tail(stderr) } : stdout ? { error: tail(stdout) } : {}),
      });
    });
  });
}

function slug(name) {
  return name
    .replace(/[^A-Za-z0-9]+/g, "-")
    .replace(/^-|-$/g, "")
    .slice(0, 80);
}

function hash(text) {
  let h = 0;
  for (const c of text) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return h;
}
