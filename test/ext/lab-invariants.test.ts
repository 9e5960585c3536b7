import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { disruptionSchema, type Disruption } from "@netstress/core/model/disruption-schema.ts";
import { networkTests } from "@netstress/network-extension/network-tests.ts";
import { PROBE_IMAGE, startLab, type Lab } from "@netstress/testbed/lab/start-lab.ts";
import type { LabFault } from "@netstress/testbed/lab/lab-fault.ts";
import type { OteResult } from "../../src/ote/schemas.ts";
import { labAvailable, labSkipReason } from "../lab/lab-available.ts";
import { eventually } from "../helpers/github-api.ts";
import { tempDir } from "../helpers/temp-dir.ts";
import { probeStates } from "./probe-states.ts";
import { labName, startExtRun } from "./run-ext.ts";

const exec = promisify(execFile);
const invariants = networkTests().filter((t) => t.kind === "invariant");
let lab: Lab;
let dir: { path: string; remove: () => Promise<void> };

// A probe answered on loopback veths in milliseconds; the timeout is there for a prober a loaded
// machine starves (800 ms made false outages). A broken path gives no answer at any timeout.
const PROBE_INTERVAL_MS = 300;
const PROBE_TIMEOUT_MS = 2000;
const env = (extra: Record<string, string>) => ({
  ...process.env,
  KUBECONFIG: lab.kubeconfigPath,
  NETSTRESS_PROBE_IMAGE: PROBE_IMAGE,
  NETSTRESS_PROBE_INTERVAL_MS: String(PROBE_INTERVAL_MS),
  NETSTRESS_PROBE_TIMEOUT_MS: String(PROBE_TIMEOUT_MS),
  ...extra,
});
const disruptionOf = (result: OteResult): Disruption[] => {
  const detail = (result.details as { name: string; value: unknown }[] | undefined)?.find(
    (d) => d.name === "netstress.disruption",
  );
  return disruptionSchema.array().parse(detail?.value);
};
const probeNamespaces = async () => {
  const config = new KubeConfig();
  config.loadFromFile(lab.kubeconfigPath);
  const list = await config.makeApiClient(CoreV1Api).listNamespace();
  return list.items.map((n) => n.metadata!.name!).filter((n) => n.startsWith("netstress-probes-"));
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Each probe pair's latest state in the run's probe namespace, once every pair has reported. */
const everyPair = async (run: ReturnType<typeof startExtRun>) => {
  const pairs = Number(/probing (\d+) probe pair/.exec(run.stderr())![1]);
  const namespace = (await probeNamespaces())[0]!;
  const states = await probeStates(lab.kubeconfigPath, namespace);
  return states.length === pairs && states;
};
/** Resolves once every probe pair's latest probe reached its target. */
const allReachable = (run: ReturnType<typeof startExtRun>) =>
  eventually(async () => {
    const states = await everyPair(run);
    return states && states.every((l) => l.ok);
  }, 60_000);

describe.skipIf(!labAvailable)(`invariant tests on a lab (${labSkipReason.split(":")[0]})`, () => {
  beforeAll(async () => {
    dir = await tempDir();
    lab = await startLab({ name: labName("extinv"), nodes: 2, build: "released", handleSignals: false });
  }, 90_000);
  afterAll(async () => {
    await lab?.stop();
    await dir?.remove();
  }, 30_000);

  it("holds every path on the released agent, one result per path, and stops on the runner's stop file", async () => {
    const stopFile = join(dir.path, "stop-clean");
    const readyFile = join(dir.path, "ready-clean");
    const run = startExtRun({
      names: invariants.map((t) => t.name),
      env: env({
        NETSTRESS_INVARIANT_STOP_FILE: stopFile,
        NETSTRESS_INVARIANT_READY_FILE: readyFile,
        NETSTRESS_INVARIANT_GRACE_SECONDS: "30",
      }),
    });
    // The runner holds the iteration's other tests until the invariants say they watch.
    const deadline = Date.now() + 90_000;
    while (!existsSync(readyFile) && Date.now() < deadline) await sleep(100);
    expect(existsSync(readyFile)).toBe(true);
    // It says so once its probes run (the log line comes before the file).
    await run.waitFor("probing ", 5_000);
    const probing = Date.now();
    // Every pair reached, and watched for longer than the observed time the results must show.
    await allReachable(run);
    await sleep(probing + 3000 - Date.now());
    const stopped = Date.now();
    await writeFile(stopFile, "");
    const { code, results } = await run.done;
    expect(Date.now() - stopped).toBeLessThan(30_000);
    expect(code).toBe(0);
    expect(results.map((r) => r.name)).toEqual(invariants.map((t) => t.name));
    for (const [i, result] of results.entries()) {
      const test = invariants[i]!;
      const [own, ...others] = disruptionOf(result);
      expect(others).toEqual([]);
      expect(own).toMatchObject({
        path: test.path,
        connection: test.connection,
        disruptedSeconds: 0,
        intervals: [],
      });
      expect(own!.observedSeconds).toBeGreaterThan(2);
      expect(result.result, `${result.name}: ${result.error}`).toBe("passed");
    }
    expect(await probeNamespaces()).toEqual([]);
  }, 240_000);

  it("fails exactly the paths an injected fault breaks, with intervals inside the fault", async () => {
    const stopFile = join(dir.path, "stop-faults");
    const run = startExtRun({
      names: invariants.map((t) => t.name),
      env: env({ NETSTRESS_INVARIANT_STOP_FILE: stopFile }),
    });
    await run.waitFor("probing ", 90_000);
    await allReachable(run);
    const [a, b] = lab.nodes;
    const config = new KubeConfig();
    config.loadFromFile(lab.kubeconfigPath);
    const core = config.makeApiClient(CoreV1Api);
    const namespace = (await probeNamespaces())[0]!;
    const server0 = await core.readNamespacedPod({ namespace, name: "server-0" });
    const clientNetns = lab.podNetns(namespace, "client-0")!;
    // A route of the client pod's own: breaks exactly one pair of one path.
    const blackhole = (address: string) => ({
      inject: () =>
        exec("ip", ["netns", "exec", clientNetns, "ip", "route", "add", "blackhole", `${address}/32`]),
      clear: () =>
        exec("ip", ["netns", "exec", clientNetns, "ip", "route", "del", "blackhole", `${address}/32`]),
    });
    const labFault = (fault: LabFault) => ({
      inject: () => lab.inject(fault),
      clear: () => lab.clear(fault),
    });
    // Which paths each fault breaks for sure, and which it may also touch (a Service's endpoints span nodes).
    const faults = [
      {
        name: "drop-route",
        breaks: ["pod-to-pod-cross-node"],
        may: ["pod-to-service"],
        ...labFault({ kind: "drop-route", from: a!.name, to: b!.name }),
      },
      {
        name: "stop-service-proxy",
        breaks: ["pod-to-service"],
        may: [],
        ...labFault({ kind: "stop-service-proxy", node: a!.name }),
      },
      {
        name: "block-host",
        breaks: ["pod-to-host", "host-to-pod"],
        may: ["pod-to-service"],
        ...labFault({ kind: "block-host", node: a!.name }),
      },
      {
        name: "blackhole server-0",
        breaks: ["pod-to-pod-same-node"],
        may: [],
        ...blackhole(server0.status!.podIP!),
      },
      {
        name: "blackhole apiserver",
        breaks: ["pod-to-apiserver"],
        may: [],
        ...blackhole(lab.apiAddress.host),
      },
    ];
    const windows: { name: string; breaks: string[]; may: string[]; from: number; to: number }[] = [];
    // Each fault stays until the probes have seen every path it breaks fail, over new and reused
    // connections alike (a reused one notices a probe timeout later), and the next begins
    // once every pair reaches its target again: windows as long as a loaded machine needs.
    for (const fault of faults) {
      const from = Date.now();
      await fault.inject();
      await eventually(async () => {
        const failing = ((await everyPair(run)) || []).filter((l) => !l.ok);
        return invariants
          .filter((t) => fault.breaks.includes(t.path))
          .every((t) => failing.some((l) => l.path === t.path && l.connection === t.connection));
      }, 60_000);
      await fault.clear();
      windows.push({ name: fault.name, breaks: fault.breaks, may: fault.may, from, to: Date.now() });
      await allReachable(run);
    }
    await writeFile(stopFile, "");
    const { results } = await run.done;
    expect(results).toHaveLength(invariants.length);
    // A probe in flight when the fault began or ended: it started up to one interval before, and
    // one that got no answer ends a timeout later.
    const slack = PROBE_INTERVAL_MS + PROBE_TIMEOUT_MS;
    for (const result of results) {
      const [d] = disruptionOf(result);
      const culprits = windows.filter((w) => w.breaks.includes(d!.path));
      for (const w of culprits) {
        expect(
          d!.intervals.some((i) => Date.parse(i.from) >= w.from - slack && Date.parse(i.to) <= w.to + slack),
          `${d!.path}/${d!.connection} has an interval inside ${w.name}: ${JSON.stringify(d!.intervals)}`,
        ).toBe(true);
      }
      for (const i of d!.intervals) {
        const explained = windows.some(
          (w) =>
            (w.breaks.includes(d!.path) || w.may.includes(d!.path)) &&
            Date.parse(i.from) >= w.from - slack &&
            Date.parse(i.from) <= w.to + slack,
        );
        expect(explained, `${d!.path}/${d!.connection} interval ${JSON.stringify(i)} is no fault's`).toBe(
          true,
        );
      }
      expect(result.result).toBe(culprits.length > 0 ? "failed" : "passed");
      if (culprits.length > 0)
        expect(result.error).toContain(`${d!.path} over ${d!.connection} connections was failing`);
    }
    expect(await probeNamespaces()).toEqual([]);
  }, 300_000);

  it("wraps up on SIGTERM as on the stop file: results printed, probes deleted, exit 0", async () => {
    const names = invariants.filter((t) => t.path === "pod-to-apiserver").map((t) => t.name);
    const run = startExtRun({ names, env: env({ NETSTRESS_INVARIANT_DURATION_SECONDS: "600" }) });
    await run.waitFor("probing ", 90_000);
    await allReachable(run);
    run.kill("SIGTERM");
    const { code, results } = await run.done;
    expect(code).toBe(0);
    expect(results.map((r) => [r.name, r.result])).toEqual(names.map((n) => [n, "passed"]));
    expect(await probeNamespaces()).toEqual([]);
  }, 120_000);
});
