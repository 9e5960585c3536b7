#!/usr/bin/env node
// `npm run demo` on a fresh clone: checks Node, installs the npm dependencies when they are
// missing, then runs `netstress demo` (a real local stress run of the sample binaries).
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 20 || (major === 20 && minor < 18)) {
  console.error(
    `netstress demo needs Node.js 20.18 or newer; this is ${process.version}. Install a current Node.js LTS.`,
  );
  process.exit(2);
}
if (!existsSync(join(root, "node_modules", "tsx")) || !existsSync(join(root, "node_modules", "commander"))) {
  console.error("installing npm dependencies (npm ci) …");
  const npm = spawnSync("npm", ["ci", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit" });
  if (npm.status !== 0) {
    console.error("npm ci failed: check that the npm registry is reachable, then run `npm ci` yourself.");
    process.exit(2);
  }
}
const demo = spawnSync(
  process.execPath,
  [join(root, "bin", "netstress.js"), "demo", ...process.argv.slice(2)],
  {
    cwd: root,
    stdio: "inherit",
  },
);
process.exit(demo.status ?? 2);
