import { parse as parseYaml } from "yaml";
import { describe, expect, it } from "vitest";
import { clusterVersionState } from "../../src/clusters/cluster-version.ts";
import { installConfigArch, renderInstallConfig } from "../../src/clusters/install-config.ts";
import { samePayload } from "../../src/registry/same-payload.ts";

const A = `quay.io/openshift-release-dev/ocp-release@sha256:${"a".repeat(64)}`;
const B = `quay.io/openshift-release-dev/ocp-release@sha256:${"b".repeat(64)}`;
const settled = (image: string) => ({
  status: {
    desired: { image },
    history: [{ state: "Completed", image }],
    conditions: [
      { type: "Available", status: "True" },
      { type: "Progressing", status: "False" },
    ],
  },
});

describe("what a cluster runs", () => {
  it("is settled only when its newest history entry completed its desired image and it is Available, not Progressing", () => {
    expect(clusterVersionState(settled(A))).toEqual({ payload: A, settled: true, detail: undefined });
    const upgrading = {
      status: {
        desired: { image: B },
        history: [
          { state: "Partial", image: B },
          { state: "Completed", image: A },
        ],
        conditions: [
          { type: "Available", status: "True" },
          { type: "Progressing", status: "True" },
        ],
      },
    };
    expect(clusterVersionState(upgrading)).toMatchObject({
      payload: B,
      settled: false,
      detail: `moving to ${B}`,
    });
    const failing = structuredClone(upgrading);
    failing.status.conditions.push({ type: "Failing", status: "True", message: "etcd degraded" } as never);
    expect(clusterVersionState(failing).detail).toBe("Failing: etcd degraded");
    expect(clusterVersionState({}).settled).toBe(false);
  });

  it("compares payloads by digest, never by tag", () => {
    expect(samePayload(A, `mirror.example:5000/ocp/release@sha256:${"a".repeat(64)}`)).toBe(true);
    expect(samePayload(A, B)).toBe(false);
    expect(samePayload("quay.io/ocp/release:4.18.1", "quay.io/ocp/release:4.18.1")).toBe(false);
    expect(samePayload("not a pullspec", A)).toBe(false);
  });
});

describe("install-config from the operator's template", () => {
  const template = [
    "apiVersion: v1",
    "# the operator's comment stays",
    "metadata: { name: template }",
    "baseDomain: old.example",
    "controlPlane: { name: master, replicas: 3 }",
    "compute:",
    "  - { name: worker, replicas: 3, platform: { aws: { type: m6g.xlarge } } }",
    "networking: { networkType: OVNKubernetes }",
    "platform: { aws: { region: eu-west-1, userTags: { team: netstress } } }",
    "",
  ].join("\n");

  it("sets name, base domain, region and both architectures, and keeps everything else", () => {
    const text = renderInstallConfig(template, {
      name: "nst-abc-pr-arm64-c0-a0",
      baseDomain: "ci.example",
      platform: "aws",
      region: "us-east-1",
      arch: "arm64",
    });
    expect(parseYaml(text)).toEqual({
      apiVersion: "v1",
      metadata: { name: "nst-abc-pr-arm64-c0-a0" },
      baseDomain: "ci.example",
      controlPlane: { name: "master", replicas: 3, architecture: "arm64" },
      compute: [
        { name: "worker", replicas: 3, platform: { aws: { type: "m6g.xlarge" } }, architecture: "arm64" },
      ],
      networking: { networkType: "OVNKubernetes" },
      platform: { aws: { region: "us-east-1", userTags: { team: "netstress" } } },
    });
    expect(text).toContain("# the operator's comment stays");
    expect(installConfigArch(text)).toBe("arm64");
  });

  it("reads a pool template's arch from its workers, else its control plane, else amd64", () => {
    expect(
      installConfigArch("compute: [{ architecture: arm64 }]\ncontrolPlane: { architecture: amd64 }"),
    ).toBe("arm64");
    expect(installConfigArch("controlPlane: { architecture: s390x }")).toBe("s390x");
    expect(installConfigArch("apiVersion: v1")).toBe("amd64");
  });
});
