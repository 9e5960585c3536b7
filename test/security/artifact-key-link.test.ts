// Item: the in-pod runner streams the files the test binaries leave in their artifact directory.
// It collected them after the run (dropping symlinks), but read them again by path when streaming:
// a binary that swapped a collected file, or a directory above it, for a symlink meanwhile had the
// runner read whatever the link named in the runner's own container — its stream key, whose path
// every Job spells the same — and stream it into the pod log for the bot to publish. Since the
// tests run in a container of their own, sharing the work directory, a process they leave behind
// can still do so. The runner now streams only a regular file of the collected size opened inside
// the artifact directory (no link followed on the way), and lists anything else as omitted.
import { execFileSync } from "node:child_process";
import { mkdir, realpath, rename, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { streamArtifactFiles } from "../../src/farm/stream-artifact-files.ts";
import type { RunManifest } from "../../src/runner/run-manifest.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

const KEY = "0123456789abcdef".repeat(4);

/** A run's output directory with two collected files of the same size as the key file. */
async function collectedRun(name: string) {
  await mkdir(join(dir.path, name), { recursive: true });
  const outDir = await realpath(join(dir.path, name));
  const secrets = join(outDir, "..", `${name}-secrets`);
  await mkdir(join(secrets, "sub"), { recursive: true });
  await writeFile(join(secrets, "key"), KEY);
  await writeFile(join(secrets, "sub", "b.txt"), KEY);
  const artifacts = join(outDir, "artifacts", "pr", "forger");
  await mkdir(join(artifacts, "sub"), { recursive: true });
  const honest = "h".repeat(KEY.length);
  await writeFile(join(artifacts, "a.txt"), honest);
  await writeFile(join(artifacts, "sub", "b.txt"), honest);
  await writeFile(join(artifacts, "c.txt"), honest);
  await writeFile(join(artifacts, "ok.txt"), honest);
  const files = ["a.txt", "sub/b.txt", "c.txt", "ok.txt"].map((file) => ({
    path: `artifacts/pr/forger/${file}`,
    bytes: KEY.length,
  }));
  const components = [
    { arm: "pr", component: "forger", artifacts: { dir: "artifacts/pr/forger", files, omitted: 0 } },
  ] as unknown as RunManifest["components"];
  return { outDir, secrets, artifacts, components };
}

async function stream(outDir: string, components: RunManifest["components"]): Promise<string> {
  let text = "";
  await streamArtifactFiles({
    outDir,
    components,
    budgetBytes: 1 << 20,
    write: async (line) => void (text += line),
  });
  return text;
}

describe("artifact files swapped for links after they were collected", () => {
  it("are not streamed: the stream carries only the honest file and lists the rest as omitted", async () => {
    const { outDir, secrets, artifacts, components } = await collectedRun("swapped");
    // The file itself, a directory above one, and a FIFO that would block a plain open.
    await rename(join(artifacts, "a.txt"), join(artifacts, "a.old"));
    await symlink(join(secrets, "key"), join(artifacts, "a.txt"));
    await rename(join(artifacts, "sub"), join(artifacts, "sub.old"));
    await symlink(join(secrets, "sub"), join(artifacts, "sub"));
    await rename(join(artifacts, "c.txt"), join(artifacts, "c.old"));
    execFileSync("mkfifo", [join(artifacts, "c.txt")]);
    const text = await stream(outDir, components);
    expect(text).not.toContain(Buffer.from(KEY).toString("base64"));
    expect(text).toContain(Buffer.from("h".repeat(KEY.length)).toString("base64"));
    const omitted = text.split("\n").filter((line) => line.includes("omitted "));
    expect(omitted).toHaveLength(3);
    for (const line of omitted) expect(line).toContain("as the regular file collected in its directory");
  });

  it("are not streamed when the artifact directory itself became a link", async () => {
    const { outDir, secrets, components } = await collectedRun("moved");
    const forger = join(outDir, "artifacts", "pr", "forger");
    await rename(forger, `${forger}.old`);
    await mkdir(join(secrets, "whole"), { recursive: true });
    for (const file of ["a.txt", "c.txt", "ok.txt"]) await writeFile(join(secrets, "whole", file), KEY);
    await symlink(join(secrets, "whole"), forger);
    const text = await stream(outDir, components);
    expect(text).not.toContain(Buffer.from(KEY).toString("base64"));
  });
});
