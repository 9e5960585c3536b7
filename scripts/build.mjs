#!/usr/bin/env node
// `npm run build [-- [--no-check] OUTDIR]`: the compiled build that the image runs
// (bin/netstress-compiled.js). --no-check emits without type-checking (tsc --noCheck), for a caller
// that has checked the types already (`npm test` runs `tsc --noEmit` first).
// tsc emits src/ and examples/ as JavaScript; the files they read at run time beside their own
// (the report's client script and styles, the sample binaries' engine, the JSON Schemas) are
// copied to the same places relative to the output, so `new URL("…", import.meta.url)` finds them.
import { spawnSync } from "node:child_process";
import { cp, readdir, rm } from "node:fs/promises";
import { dirname, extname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const noCheck = args.includes("--no-check");
const outArg = args.find((a) => a !== "--no-check");
const outDir = resolve(outArg ?? join(root, "dist"));

await rm(outDir, { recursive: true, force: true });
const tsc = spawnSync(
  process.execPath,
  [
    join(root, "node_modules", "typescript", "bin", "tsc"),
    "-p",
    join(root, "tsconfig.build.json"),
    "--outDir",
    outDir,
    ...(noCheck ? ["--noCheck"] : []),
  ],
  { stdio: "inherit" },
);
if (tsc.status !== 0) {
  process.stderr.write(`build: tsc failed (exit ${tsc.status ?? tsc.signal}); nothing usable in ${outDir}\n`);
  await rm(outDir, { recursive: true, force: true });
  process.exit(1);
}

const copied = [];
for (const dir of ["src", "examples"]) {
  for (const entry of await readdir(join(root, dir), { recursive: true, withFileTypes: true })) {
    // The process spawner is built for the output below, never copied from a possibly stale build.
    if (!entry.isFile() || extname(entry.name) === ".ts" || entry.name === "netstress-spawner") continue;
    const from = join(entry.parentPath, entry.name);
    await cp(from, join(outDir, relative(root, from)));
    copied.push(relative(root, from));
  }
}
await cp(join(root, "schemas"), join(outDir, "schemas"), { recursive: true });
const spawner = spawnSync(
  "bash",
  [join(root, "scripts", "build-spawner.sh"), join(outDir, "src", "runner", "native", "netstress-spawner")],
  { stdio: "inherit" },
);
if (spawner.status !== 0) {
  process.stderr.write(
    `build: the process spawner did not compile (exit ${spawner.status ?? spawner.signal})\n`,
  );
  process.exit(1);
}
process.stderr.write(
  `build: ${relative(process.cwd(), outDir) || "."} (assets: ${copied.join(", ")}, schemas/)\n`,
);
