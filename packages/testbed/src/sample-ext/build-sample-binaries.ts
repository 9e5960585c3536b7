import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import {
  CLUSTER_BUILD_EFFECTS,
  ovnKubernetesPr,
  ovnKubernetesReleased,
  sdnReleased,
  type SampleSuite,
} from "./suites.ts";

const ENGINE = new URL("./engine.mjs", import.meta.url);

/**
 * Writes one self-contained OTE binary (a Node script) for a suite, knowing how the clusters'
 * component builds change its tests (CLUSTER_BUILD_EFFECTS); gzipped too when asked.
 */
export async function writeSampleBinary(options: {
  suite: SampleSuite;
  path: string;
  gzip?: boolean;
}): Promise<string> {
  const engine = await readFile(ENGINE, "utf8");
  const body = engine.replace(
    "export async function sampleExtensionMain",
    "async function sampleExtensionMain",
  );
  const suite = { clusterEffects: CLUSTER_BUILD_EFFECTS, ...options.suite };
  const script = `#!/usr/bin/env node\n${body}\nsampleExtensionMain(${JSON.stringify(suite)});\n`;
  if (options.gzip) {
    await writeFile(options.path, gzipSync(script));
  } else {
    await writeFile(options.path, script);
    await chmod(options.path, 0o755);
  }
  return options.path;
}

export interface SampleBinaries {
  released: { "ovn-kubernetes": string; sdn: string };
  pr: { "ovn-kubernetes": string };
}

/** The demo's binaries: released ovn-kubernetes and sdn, and the PR build of ovn-kubernetes. */
export async function buildSampleBinaries(options: {
  outDir: string;
  gzip?: boolean;
}): Promise<SampleBinaries> {
  const released = join(options.outDir, "released");
  const pr = join(options.outDir, "pr");
  await mkdir(released, { recursive: true });
  await mkdir(pr, { recursive: true });
  const suffix = options.gzip ? "-tests-ext.gz" : "-tests-ext";
  const write = (suite: SampleSuite, dir: string) =>
    writeSampleBinary({ suite, path: join(dir, `${suite.component}${suffix}`), gzip: options.gzip });
  return {
    released: {
      "ovn-kubernetes": await write(ovnKubernetesReleased, released),
      sdn: await write(sdnReleased, released),
    },
    pr: { "ovn-kubernetes": await write(ovnKubernetesPr, pr) },
  };
}
