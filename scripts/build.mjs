#!/usr/bin/env node
// `npm run build [-- [--no-check] [--without-testbed] OUTDIR]`: the compiled build that the image
// runs (bin/netstress-compiled.js). --no-check emits without type-checking (tsc --noCheck), for a
// caller that has checked the types already (`npm test` runs `tsc --noEmit` first).
// --without-testbed leaves the test bed (packages/testbed: simulated clusters, the lab, the sample
// payload) out of the output, as the image does: `netstress demo`, `lab` and `serve
// --sample-payload` then say that they need it.
// tsc emits src/ and the packages' src/ as JavaScript; the files they read at run time beside their
// own (the report's client script and styles, the sample binaries' engine, the JSON Schemas) are
// copied to the same places relative to the output, so `new URL("…", import.meta.url)` finds them.
import { spawnSync } from "node:child_process";
import { cp, readdir, readFile, rm } from "node:fs/promises";
import { dirname, extname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { linkEmittedPackages } from "./link-emitted-packages.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const noCheck = args.includes("--no-check");
const withoutTestbed = args.includes("--without-testbed");
const outArg = args.find((a) => !a.startsWith("--"));
const outDir = resolve(outArg ?? join(root, "dist"));

await rm(outDir, { recursive: true, force: true });
const runTsc = (...options) =>
  spawnSync(
    process.execPath,
    [
      join(root, "node_modules", "typescript", "bin", "tsc"),
      "-p",
      join(root, "tsconfig.build.json"),
      ...options,
    ],
    { stdio: "inherit" },
  );
// The types are checked apart from the emit: the emit's rewriteRelativeImportExtensions reports
// every import of a workspace package by name (TS2877, "not rewritten"), which
// link-emitted-packages.mjs below points at the emitted files instead.
const check = noCheck ? { status: 0 } : runTsc("--noEmit", "--rewriteRelativeImportExtensions", "false");
const tsc = check.status === 0 ? runTsc("--outDir", outDir, "--noCheck") : check;
if (tsc.status !== 0) {
  process.stderr.write(`build: tsc failed (exit ${tsc.status ?? tsc.signal}); nothing usable in ${outDir}\n`);
  await rm(outDir, { recursive: true, force: true });
  process.exit(1);
}

const TESTBED = join("packages", "testbed", "src");
const SOURCES = [
  "src",
  join("packages", "core", "src"),
  join("packages", "network-extension", "src"),
  TESTBED,
].filter((dir) => !(withoutTestbed && dir === TESTBED));
if (withoutTestbed) await rm(join(outDir, "packages", "testbed"), { recursive: true, force: true });
await linkEmittedPackages(outDir);

const copied = [];
for (const dir of SOURCES) {
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
await bundleCli();
process.stderr.write(
  `build: ${relative(process.cwd(), outDir) || "."} (assets: ${copied.join(", ")}, schemas/; CLI bundle: bundle/)\n`,
);

/**
 * The CLI as bin/netstress-compiled.js loads it: bundle/main.js, one chunk per command besides the
 * shared ones. Node 20 resolves and links an ES module graph file by file, and zod alone is 95
 * modules: bundled, `netstress run` starts in 0.13 s instead of 0.18 s. Only our own code and the
 * pure-JS packages every command loads are bundled; any other package stays in node_modules, where
 * it finds its own files. Each of our modules keeps the import.meta.url of its emitted file, so the
 * files read beside it (report assets, Lua scripts, the process spawner) are found where they are.
 */
async function bundleCli() {
  const { build } = await import("esbuild");
  const bundled = new Set(["zod", "commander", "@marcbachmann/cel-js"]);
  const bundleDir = join(outDir, "bundle");
  const emitted = SOURCES.map((dir) => join(outDir, dir) + "/");
  await build({
    entryPoints: { main: join(outDir, "src", "cli", "main.js") },
    outdir: bundleDir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    // Chunks sit beside main.js: every one of them reaches dist/ by the same relative path.
    chunkNames: "[name]-[hash]",
    // Bundled CommonJS packages (commander) require Node's modules.
    banner: {
      js: 'import { createRequire as netstressCreateRequire } from "node:module"; const require = netstressCreateRequire(import.meta.url);',
    },
    logLevel: "warning",
    plugins: [
      {
        name: "netstress-bundle",
        setup(esbuild) {
          esbuild.onResolve({ filter: /^[^./]/ }, ({ path }) => {
            const name = path.startsWith("@") ? path.split("/").slice(0, 2).join("/") : path.split("/")[0];
            return bundled.has(name) ? undefined : { external: true };
          });
          // zod's namespace export carries its error messages in 60-odd languages; ours are English.
          esbuild.onResolve({ filter: /\/locales\/index\.js$/ }, ({ path, importer }) =>
            importer.includes("/node_modules/zod/")
              ? { path: join(dirname(importer), path), namespace: "zod-locales" }
              : undefined,
          );
          esbuild.onLoad({ filter: /.*/, namespace: "zod-locales" }, ({ path }) => ({
            contents: `export { default as en } from ${JSON.stringify(join(dirname(path), "en.js"))};`,
            resolveDir: dirname(path),
            loader: "js",
          }));
          esbuild.onLoad({ filter: /\.js$/ }, async ({ path }) => {
            if (!emitted.some((dir) => path.startsWith(dir))) return undefined;
            const own = JSON.stringify(relative(bundleDir, path));
            const text = await readFile(path, "utf8");
            return {
              contents: text.replaceAll("import.meta.url", `new URL(${own}, import.meta.url).href`),
              loader: "js",
            };
          });
        },
      },
    ],
  });
}
