import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createKubeObjects } from "@netstress/core/kube/kube-objects.ts";

const TOKEN = "sha256~kubeconfig-token-that-must-stay-secret";

/** A kubeconfig whose token line lost its closing quote, as a hand-edited Secret may. */
const broken = [
  "apiVersion: v1",
  "kind: Config",
  "users:",
  "- name: admin",
  "  user:",
  `    token: "${TOKEN}`,
  "    other: [",
  "",
].join("\n");

describe("kubeconfigs that cannot be read", () => {
  it("says whose kubeconfig is not valid YAML and on which line, never quoting its lines", () => {
    const attempt = () =>
      createKubeObjects({ name: "lab/pr-1", kubeconfig: { text: broken }, timeoutMs: 1000 });
    expect(attempt).toThrow("kubeconfig of lab/pr-1 is not valid YAML (line 8)");
    try {
      attempt();
    } catch (error) {
      expect(String((error as Error).message)).not.toContain(TOKEN);
      expect((error as Error).cause).toBeUndefined();
    }
  });

  it("names the file of a kubeconfig that cannot be opened", () => {
    const path = join("/nonexistent", "kubeconfig");
    expect(() => createKubeObjects({ name: "hub", kubeconfig: { path }, timeoutMs: 1000 })).toThrow(
      /^kubeconfig of hub cannot be read: .*ENOENT.*\/nonexistent\/kubeconfig/,
    );
  });
});
