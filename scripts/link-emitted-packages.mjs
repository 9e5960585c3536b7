#!/usr/bin/env node
// `node scripts/link-emitted-packages.mjs OUTDIR`: after tsc has emitted the repository's sources
// into OUTDIR (rootDir "."), points the emitted imports of our workspace packages
// (`@netstress/core/model/result-record.ts`) at the emitted files (`../packages/core/src/model/
// result-record.js`, relative to the importer). tsc rewrites the extensions of relative imports
// only, and a package's `exports` name its TypeScript sources, which Node cannot load. A package
// whose sources were not emitted (the test bed, in the bot's image) keeps its name: importing it
// fails as a missing package, which the CLI turns into a message saying so.
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const PACKAGE_IMPORT = /(["'])@netstress\/([\w-]+)\/([^"']+)\.ts\1/g;

/** Rewrites every emitted .js file under outDir; returns how many it changed. */
export async function linkEmittedPackages(outDir) {
  const emitted = new Set();
  for (const name of await readdir(join(outDir, "packages")).catch(() => [])) {
    if ((await stat(join(outDir, "packages", name, "src")).catch(() => undefined))?.isDirectory())
      emitted.add(name);
  }
  let changed = 0;
  for (const entry of await readdir(outDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".js") || entry.parentPath.includes("node_modules")) continue;
    const file = join(entry.parentPath, entry.name);
    const text = await readFile(file, "utf8");
    const linked = text.replace(PACKAGE_IMPORT, (whole, quote, name, path) => {
      if (!emitted.has(name)) return whole;
      const target = relative(dirname(file), join(outDir, "packages", name, "src", `${path}.js`));
      return quote + (target.startsWith(".") ? target : `./${target}`) + quote;
    });
    if (linked !== text) {
      await writeFile(file, linked);
      changed += 1;
    }
  }
  return changed;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const outDir = process.argv[2];
  if (!outDir) {
    process.stderr.write("usage: node scripts/link-emitted-packages.mjs OUTDIR\n");
    process.exit(2);
  }
  await linkEmittedPackages(outDir);
}
