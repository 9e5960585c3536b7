import { gzipSync } from "node:zlib";

export const CLUSTER_API_TESTS = {
  answers: "[sig-network] the cluster under test's API server should answer",
  upgrade:
    "[sig-network][Disruptive][Upgrade][Serial] the API server should stay reachable while the cluster upgrades",
} as const;

/**
 * An OTE extension (a Node script, gzipped as payload images carry it) whose tests are clients of
 * the cluster under test its KUBECONFIG names (first cluster and user, plain https with the CA):
 * `answers` reads ClusterVersion and passes when the API server answers (a hibernated or lost
 * cluster does not), saying which release the cluster runs; `upgrade` does what the network
 * extension's upgrade test does — skips without NETSTRESS_UPGRADE_TARGET or when ClusterVersion's
 * history has the target already, else asks for the update (spec.desiredUpdate, force) and waits
 * for the history's Completed entry — while it probes the API server over a new connection every
 * 100 ms, and reports what it measured as the `netstress.disruption` detail (path
 * pod-to-apiserver).
 */
export function clusterApiExtension(): Buffer {
  const script = `#!/usr/bin/env node
const { readFileSync } = require("node:fs");
const https = require("node:https");
const http = require("node:http");
const tests = ${JSON.stringify(CLUSTER_API_TESTS)};
const out = (value) => process.stdout.write(JSON.stringify(value) + "\\n");
const stamp = (d) => d.toISOString().replace("T", " ").replace("Z", "000 UTC");
const [command, ...args] = process.argv.slice(2);
const spec = (name) => ({ name, labels: {}, resources: { isolation: {} }, source: "openshift:payload:cluster-api", lifecycle: "blocking", environmentSelector: {} });

function client() {
  const text = readFileSync(process.env.KUBECONFIG, "utf8");
  const field = (name) => new RegExp("^[\\\\s-]*" + name + ":\\\\s*[\\"']?([^\\"'\\\\s]+)[\\"']?\\\\s*$", "m").exec(text)?.[1];
  const server = field("server");
  const token = field("token");
  const ca = field("certificate-authority-data");
  return (method, path, body) => {
    const url = new URL(path, server);
    const transport = url.protocol === "https:" ? https : http;
    return new Promise((resolve, reject) => {
      const req = transport.request(url, {
        method,
        agent: false,
        timeout: 2000,
        headers: { accept: "application/json", authorization: "Bearer " + token, ...(body ? { "content-type": "application/merge-patch+json" } : {}) },
        ...(ca ? { ca: Buffer.from(ca, "base64").toString("utf8") } : { rejectUnauthorized: false }),
      }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c) => (text += c));
        res.on("end", () => (res.statusCode < 300 ? resolve(text.startsWith("{") ? JSON.parse(text) : text) : reject(new Error(method + " " + path + ": HTTP " + res.statusCode + " " + text))));
      });
      req.on("timeout", () => req.destroy(new Error("no answer in 2s")));
      req.on("error", reject);
      req.end(body ? JSON.stringify(body) : undefined);
    });
  };
}
const CLUSTER_VERSION = "/apis/config.openshift.io/v1/clusterversions/version";

async function answers(api) {
  const version = await api("GET", CLUSTER_VERSION);
  const running = version.status.history.find((h) => h.state === "Completed");
  return { result: "passed", output: "the API server answered; the cluster runs " + running.image };
}

async function upgrade(api) {
  const target = process.env.NETSTRESS_UPGRADE_TARGET;
  if (!target) return { result: "skipped", output: "NETSTRESS_UPGRADE_TARGET is not set" };
  const before = await api("GET", CLUSTER_VERSION);
  const from = before.status.history.find((h) => h.state === "Completed").image;
  if (before.status.history.some((h) => h.image === target))
    return { result: "skipped", output: "the cluster was upgraded to " + target + " already" };
  const since = Date.now();
  const intervals = [];
  let down;
  let done = false;
  const probe = async () => {
    while (!done) {
      const at = new Date();
      const ok = await api("GET", "/readyz").then(() => true, (e) => e.message);
      if (ok !== true && !down) down = { from: at.toISOString(), reason: ok };
      if (ok === true && down) intervals.push({ ...down, to: at.toISOString() }), (down = undefined);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const probing = probe();
  await api("PATCH", CLUSTER_VERSION, { spec: { desiredUpdate: { image: target, version: "", force: true } } });
  for (;;) {
    const version = await api("GET", CLUSTER_VERSION).catch(() => undefined);
    if (version?.status.history.find((h) => h.image === target)?.state === "Completed") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  done = true;
  await probing;
  if (down) intervals.push({ ...down, to: new Date().toISOString() });
  const seconds = (a, b) => (Date.parse(b) - Date.parse(a)) / 1000;
  const disruption = [{
    path: "pod-to-apiserver",
    connection: "new",
    observedSeconds: (Date.now() - since) / 1000,
    disruptedSeconds: intervals.reduce((sum, i) => sum + seconds(i.from, i.to), 0),
    budgetSeconds: 0,
    intervals,
  }];
  return { result: "passed", output: "upgraded the cluster from " + from + " to " + target, details: [{ name: "netstress.disruption", value: disruption }] };
}

async function main() {
  if (command === "info")
    return out({ apiVersion: "v1.1", source: { commit: "${"c".repeat(40)}", build_date: "2026-01-01T00:00:00Z", git_tree_state: "clean" }, component: { product: "openshift", type: "payload", name: "cluster-api" }, suites: [] });
  if (command === "list") return Object.values(tests).forEach((name) => out(spec(name)));
  if (command !== "run-test") process.exit(2);
  const names = [];
  for (let i = 0; i < args.length; i++) if (args[i] === "-n") names.push(args[++i]);
  for (const name of names) {
    const start = new Date();
    const outcome = await (name === tests.upgrade ? upgrade : answers)(client()).catch((e) => ({ result: "failed", output: e.message, error: e.message }));
    const end = new Date();
    out({ name, lifecycle: "blocking", duration: end - start, startTime: stamp(start), endTime: stamp(end), ...outcome });
  }
}
main();
`;
  return gzipSync(script);
}
