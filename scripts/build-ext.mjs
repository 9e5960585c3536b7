#!/usr/bin/env node
// `node scripts/build-ext.mjs [OUTDIR]`: the netstress-network-tests extension as one gzipped
// executable, `OUTDIR/netstress-network-tests-ext.gz` (default dist-ext/), that openshift-tests or
// the runner can run like any component's test binary. It is a Node single executable application:
// esbuild bundles packages/network-extension/src (the Kubernetes client and zod included) into one CommonJS script, Node
// turns it into a SEA blob, and postject injects the blob into a copy of this Node binary — so the
// binary runs on machines of this one's OS and CPU architecture, with nothing else installed.
import { execFileSync, spawnSync } from "node:child_process";
import { copyFile, mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outDir = resolve(process.argv[2] ?? join(root, "dist-ext"));
const require = createRequire(import.meta.url);
const { build } = await import("esbuild");
const fail = (why) => {
  process.stderr.write(`build-ext: ${why}\n`);
  process.exit(1);
};

const git = (...args) => {
  try {
    return execFileSync("git", args, { cwd: root, encoding: "utf8" }).trim();
  } catch {
    return "";
  }
};
// An image build has no .git: it names the commit (NETSTRESS_BUILD_COMMIT).
const stamp = {
  commit: process.env.NETSTRESS_BUILD_COMMIT || git("rev-parse", "HEAD"),
  buildDate: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
  gitTreeState: process.env.NETSTRESS_BUILD_COMMIT
    ? "clean"
    : git("status", "--porcelain") === ""
      ? "clean"
      : "dirty",
};

await rm(outDir, { recursive: true, force: true });
await mkdir(outDir, { recursive: true });
const work = join(outDir, "work");
await mkdir(work);
const bundle = join(work, "netstress-network-tests-ext.cjs");
await build({
  stdin: {
    contents: `import { extMain } from "@netstress/network-extension/ext-main.ts";
extMain(process.argv.slice(2)).then(
  (code) => process.stdout.write("", () => process.exit(code)),
  (error) => { process.stderr.write(String(error && error.stack || error) + "\\n"); process.exit(2); },
);`,
    resolveDir: root,
    sourcefile: "netstress-network-tests-ext.ts",
    loader: "ts",
  },
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  outfile: bundle,
  define: { __NETSTRESS_EXT_BUILD__: JSON.stringify(stamp) },
  // Optional native speed-ups of ws that the bundle does without.
  external: ["bufferutil", "utf-8-validate"],
  logLevel: "warning",
  legalComments: "none",
});

// A SEA's main script loads no files of its own: everything it needs is in the bundle.
const blob = join(work, "sea-prep.blob");
const config = join(work, "sea-config.json");
await writeFile(config, JSON.stringify({ main: bundle, output: blob, disableExperimentalSEAWarning: true }));
const sea = spawnSync(process.execPath, ["--experimental-sea-config", config], { stdio: "inherit" });
if (sea.status !== 0) fail(`node --experimental-sea-config failed (exit ${sea.status ?? sea.signal})`);

const binary = join(work, "netstress-network-tests-ext");
await copyFile(process.execPath, binary);
const postject = require.resolve("postject/dist/cli.js");
const inject = spawnSync(
  process.execPath,
  [
    postject,
    binary,
    "NODE_SEA_BLOB",
    blob,
    "--sentinel-fuse",
    "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2",
  ],
  { encoding: "utf8" },
);
// postject warns about ELF notes it does not know on every build: its output matters only when it fails.
if (inject.status !== 0) fail(`postject failed (exit ${inject.status ?? inject.signal}): ${inject.stderr}`);

// The binary must answer as an extension before it is shipped.
const info = spawnSync(binary, ["info"], { encoding: "utf8", timeout: 60_000 });
if (info.status !== 0 || !info.stdout.includes('"netstress-network-tests"')) {
  fail(`the built binary does not answer info: ${info.stderr || info.stdout}`);
}
const gz = join(outDir, "netstress-network-tests-ext.gz");
// zlib's default level: level 9 took 12 s of CPU for 0.7% less than the default's 4 s.
await writeFile(gz, gzipSync(await readFile(binary)));
await rm(work, { recursive: true, force: true });
process.stdout.write(
  `${gz} (${((await stat(gz)).size / 2 ** 20).toFixed(1)} MiB, commit ${stamp.commit || "unknown"})\n`,
);
