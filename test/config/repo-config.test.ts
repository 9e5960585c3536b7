import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { expandImageTemplate } from "../../src/config/expand-image-template.ts";
import { parseRepoConfig } from "../../src/config/load-repo-config.ts";
import { runSource } from "../../src/config/run-source.ts";
import { GENERATED_SCHEMAS, renderSchema } from "../../schemas/generate.ts";

describe("parseRepoConfig", () => {
  it("reads a full configuration and fills the defaults", () => {
    const result = parseRepoConfig(
      [
        "tags: [ovn-kubernetes]",
        'pr_image: "registry.ci.example/{org}/{repo}:pr{pr}-{sha}-{tag}"',
        "payload: quay.io/openshift-release-dev/ocp-release:4.18.0-multi",
        "arches: [amd64, arm64]",
        "iterations: 20",
        "run_if_changed: ^go-controller/",
        "capabilities: [ipv6, ovn-ic]",
      ].join("\n"),
    );
    expect(result).toMatchObject({
      kind: "valid",
      config: {
        capabilities: ["ipv6", "ovn-ic"],
        automatic: true,
        drafts: false,
        tags: ["ovn-kubernetes"],
        arches: ["amd64", "arm64"],
        iterations: 20,
        baseline: "payload",
        limits: { max_iterations: 50, max_more: 50 },
        image_wait_minutes: 120,
      },
    });
  });

  it("reads the suite, whether [Disruptive] tests run, and the network parallelism", () => {
    const result = parseRepoConfig(
      [
        "suite: openshift/conformance/parallel",
        "disruptive: true",
        "parallel: 8",
        "network_parallel: 4",
      ].join("\n"),
    );
    expect(result).toMatchObject({
      kind: "valid",
      config: { suite: "openshift/conformance/parallel", disruptive: true, parallel: 8, network_parallel: 4 },
    });
    expect(parseRepoConfig("")).toMatchObject({ config: { disruptive: false } });
    const bad = parseRepoConfig(["suite: 'not a suite!'", "parallel: 4", "network_parallel: 8"].join("\n"));
    const problems = bad.kind === "invalid" ? bad.problems.join("\n") : "";
    expect(problems).toMatch(/^suite: a suite name/m);
    expect(problems).toMatch(/^network_parallel: network_parallel exceeds parallel/m);
  });

  it("reads mode: adaptive with its target and budget, and says how to write them when they are wrong", () => {
    const adaptive = parseRepoConfig(["mode: adaptive", "budget: 30 iterations"].join("\n"));
    expect(adaptive).toMatchObject({ kind: "valid", config: { mode: "adaptive", target: "0.02:0.10" } });
    expect(adaptive.kind === "valid" && runSource(adaptive.config, { tags: [] })).toMatchObject({
      ok: true,
      source: { adaptive: { target: { from: 0.02, to: 0.1 }, budgetIterations: 30 } },
    });
    expect(parseRepoConfig("")).toMatchObject({ config: { mode: "fixed" } });
    const problems = (text: string) => {
      const result = parseRepoConfig(text);
      return result.kind === "invalid" ? result.problems.join("\n") : "";
    };
    expect(problems("mode: adaptive")).toMatch(
      /^budget: mode: adaptive needs a budget, e\.g\. budget: 30 iterations/m,
    );
    expect(problems("mode: adaptive\nbudget: 3 hours")).toMatch(
      /^budget: write the budget as '<N> iterations' \(e\.g\. '30 iterations'\)/m,
    );
    expect(problems("budget: 30 iterations")).toMatch(/^budget: budget applies to mode: adaptive only/m);
    expect(problems("mode: adaptive\nbudget: 60 iterations")).toMatch(/exceed limits\.max_iterations/);
    expect(problems("mode: adaptive\nbudget: 9 iterations\ntarget: 0.10:0.02")).toMatch(
      /^target: the target's P0 must be below its P1/m,
    );
    expect(problems("target: 2%:10%")).toMatch(/^target: write the target as P0:P1/m);
  });

  it("treats a missing file as commands only, no automatic runs", () => {
    expect(parseRepoConfig(undefined)).toMatchObject({ kind: "absent", config: { automatic: false } });
  });

  it("treats an empty file as opting in with every default", () => {
    expect(parseRepoConfig("")).toMatchObject({ kind: "valid", config: { automatic: true } });
  });

  it("names every problem with its key, including typos", () => {
    const result = parseRepoConfig(
      [
        "arches: [amd64, sparc]",
        "iteration: 5",
        "pr_image: quay.io/x/{name}",
        "payload: a",
        "release_stream: b",
        "run_if_changed: '(['",
        "capabilities: [IPv6]",
      ].join("\n"),
    );
    expect(result.kind).toBe("invalid");
    const problems = result.kind === "invalid" ? result.problems.join("\n") : "";
    expect(problems).toMatch(/^arches\.1: /m);
    expect(problems).toMatch(/Unrecognized key.*"iteration"/);
    expect(problems).toMatch(/^pr_image: must contain \{tag\}/m);
    expect(problems).toMatch(/^run_if_changed: must be a valid regular expression/m);
    expect(problems).toMatch(/^capabilities\.0: a capability: lowercase letters/m);
  });

  it("reports payload and release_stream given together", () => {
    const result = parseRepoConfig("payload: a\nrelease_stream: b\n");
    expect(result).toEqual({
      kind: "invalid",
      problems: ["release_stream: give payload or release_stream, not both"],
    });
  });

  it("reports YAML that does not parse, with where", () => {
    const result = parseRepoConfig("arches: [amd64\n");
    expect(result.kind).toBe("invalid");
    expect(result.kind === "invalid" && result.problems[0]).toMatch(
      /^\.github\/network-stress\.yml is not valid YAML: .*line/,
    );
  });

  it("expands the PR image template", () => {
    expect(
      expandImageTemplate("quay.io/{org}/{repo}:pr{pr}-{sha}-{tag}", {
        org: "openshift",
        repo: "ovn-kubernetes",
        pr: 42,
        sha: "abc123",
        tag: "ovn-kubernetes",
      }),
    ).toBe("quay.io/openshift/ovn-kubernetes:pr42-abc123-ovn-kubernetes");
  });

  it("reads a pr_payload template, which names no {tag}, and expands it", () => {
    const result = parseRepoConfig('pr_payload: "registry.ci.example/ci/{repo}-release:pr{pr}-{sha}"');
    expect(result).toMatchObject({
      kind: "valid",
      config: { pr_payload: "registry.ci.example/ci/{repo}-release:pr{pr}-{sha}" },
    });
    expect(
      expandImageTemplate("registry.ci.example/ci/{repo}-release:pr{pr}-{sha}", {
        org: "openshift",
        repo: "ovn-kubernetes",
        pr: 42,
        sha: "abc123",
      }),
    ).toBe("registry.ci.example/ci/ovn-kubernetes-release:pr42-abc123");
    const bad = parseRepoConfig('pr_payload: "quay.io/ci/release:{tag}"');
    expect(bad.kind === "invalid" && bad.problems).toEqual([
      "pr_payload: the placeholders are {org} {repo} {pr} {sha}",
    ]);
  });
});

describe("runSource", () => {
  const defaults = { payload: "quay.io/ocp/release:4.18", tags: ["ovn-kubernetes"] };
  const configOf = (text: string) => {
    const result = parseRepoConfig(text);
    if (result.kind !== "valid") throw new Error(`invalid: ${text}`);
    return result.config;
  };

  it("carries the capabilities a repository requires to its runs, and none when it names none", () => {
    expect(runSource(configOf("capabilities: [ipv6]"), defaults)).toMatchObject({
      ok: true,
      source: { capabilities: ["ipv6"], payload: defaults.payload, tags: defaults.tags },
    });
    const plain = runSource(configOf("parallel: 2"), defaults);
    expect(plain.ok && "capabilities" in plain.source).toBe(false);
  });

  it("carries pr_payload to its runs, and refuses one naming a local OCI layout", () => {
    expect(runSource(configOf("pr_payload: quay.io/ci/release:pr{pr}"), defaults)).toMatchObject({
      ok: true,
      source: { prPayload: "quay.io/ci/release:pr{pr}" },
    });
    expect(runSource(configOf("pr_payload: oci:/srv/layout:pr{pr}"), defaults)).toEqual({
      ok: false,
      problems: [
        "pr_payload: local OCI layouts (oci:…) may be set by the bot's operator only, not in .github/network-stress.yml",
      ],
    });
  });
});

describe("committed JSON Schemas", () => {
  it.each(Object.entries(GENERATED_SCHEMAS))(
    "schemas/%s is what the zod schema generates (regenerate: npx tsx schemas/generate.ts)",
    async (file, generate) => {
      const committed = await readFile(new URL(`../../schemas/${file}`, import.meta.url), "utf8");
      expect(committed).toBe(renderSchema(generate()));
    },
  );
});
