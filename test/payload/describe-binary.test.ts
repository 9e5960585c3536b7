import { chmod, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { describeBinary } from "../../src/payload/describe-binary.ts";
import { tempDir } from "../helpers/temp-dir.ts";

let dir: { path: string; remove: () => Promise<void> };
beforeAll(async () => {
  dir = await tempDir();
});
afterAll(() => dir.remove());

describe("describeBinary", () => {
  it("tells the binary nothing of the caller's cluster or secrets", async () => {
    // `info` reports, as its commit, which of the caller's variables reached it.
    const binary = join(dir.path, "env-tests-ext");
    await writeFile(
      binary,
      `#!/usr/bin/env node
const seen = ["KUBECONFIG", "WEBHOOK_SECRET", "PATH"].filter((name) => process.env[name] !== undefined);
if (process.argv[2] === "info") console.log(JSON.stringify({ apiVersion: "v1.1",
  source: { commit: seen.join(","), build_date: "", git_tree_state: "clean" },
  component: { product: "openshift", type: "payload", name: "env" } }));
else if (process.argv[2] === "images") console.log("[]");
else process.exit(1);
`,
    );
    await chmod(binary, 0o755);
    const described = await describeBinary({
      binary,
      cacheDir: join(dir.path, "cache"),
      arch: hostArch(),
      images: true,
      env: { PATH: process.env.PATH, KUBECONFIG: "/home/me/.kube/prod", WEBHOOK_SECRET: "s3cret" },
    });
    expect(described).toEqual({ source: { commit: "PATH", gitTreeState: "clean" }, images: [] });
  });
});
