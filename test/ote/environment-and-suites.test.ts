import { describe, expect, it } from "vitest";
import { environmentFlagArgs } from "../../src/ote/environment-flag-args.ts";
import { environmentSelects } from "../../src/ote/environment-selects.ts";
import { oteSpecSchema } from "../../src/ote/schemas.ts";
import { suiteMembership, type OteSuite } from "../../src/ote/suite-membership.ts";

const spec = (name: string, extra: Record<string, unknown> = {}) =>
  oteSpecSchema.parse({ name, source: "openshift:payload:ovn-kubernetes", labels: {}, ...extra });

describe("environmentFlagArgs", () => {
  const environment = {
    platform: "aws",
    network: "ovn",
    networkStack: "dual",
    optionalCapabilities: ["Console", "Ingress"],
    facts: { "cni.ovn.gateway-mode": "local" },
    featureGates: ["RouteExternalCertificate"],
    apiGroups: ["route.openshift.io"],
  };

  it("passes every value as --flag=value, lists once per value", () => {
    expect(environmentFlagArgs({ environment, apiVersion: "v1.1" })).toEqual([
      "--platform=aws",
      "--network=ovn",
      "--network-stack=dual",
      "--optional-capability=Console",
      "--optional-capability=Ingress",
      "--api-group=route.openshift.io",
      "--feature-gate=RouteExternalCertificate",
      "--fact=cni.ovn.gateway-mode=local",
    ]);
  });

  it("leaves out flags a binary's older extension API does not know", () => {
    const args = environmentFlagArgs({ environment, apiVersion: "v1.0" });
    expect(args.some((a) => a.startsWith("--feature-gate") || a.startsWith("--api-group"))).toBe(false);
    expect(args).toContain("--platform=aws");
  });
});

describe("environmentSelects", () => {
  const selector = { include: 'platform=="aws" || platform=="gcp"', exclude: 'network=="sdn"' };

  it("includes every test when no environment is known, as the binaries do", () => {
    expect(environmentSelects({ selector, environment: {} })).toBe(true);
  });

  it("honours include and exclude, exclude first", () => {
    expect(environmentSelects({ selector, environment: { platform: "aws" } })).toBe(true);
    expect(environmentSelects({ selector, environment: { platform: "metal" } })).toBe(false);
    expect(environmentSelects({ selector, environment: { platform: "aws", network: "sdn" } })).toBe(false);
  });

  it("evaluates the helpers openshift-tests-extension generates", () => {
    const environment = {
      platform: "aws",
      optionalCapabilities: ["Console"],
      featureGates: ["GatewayAPI"],
      facts: { mode: "shared-gw" },
    };
    const selects = (include: string) => environmentSelects({ selector: { include }, environment });
    expect(selects('optionalCapabilities.exists(oc, oc=="Console")')).toBe(true);
    expect(selects('!featureGates.exists(fg, fg=="GatewayAPI")')).toBe(false);
    expect(selects('(fact_keys.exists(k, k=="mode") && facts["mode"].matches("^shared"))')).toBe(true);
    expect(selects("size(optionalCapabilities) == 0")).toBe(false);
  });

  it("refuses an expression that does not type-check, saying why", () => {
    expect(() =>
      environmentSelects({ selector: { include: "platform == 1" }, environment: { platform: "aws" } }),
    ).toThrow(/CEL expression "platform == 1" is invalid: .*no such overload/);
  });
});

describe("suiteMembership", () => {
  const suites: OteSuite[] = [
    {
      name: "ovn-kubernetes/conformance/parallel",
      parents: ["openshift/conformance/parallel"],
      qualifiers: ['source == "openshift:payload:ovn-kubernetes" && !name.contains("[Serial]")'],
    },
    {
      name: "sdn/conformance/parallel",
      parents: ["openshift/conformance/parallel"],
      qualifiers: ['labels.exists(l, l == "SDN")'],
    },
    {
      name: "openshift/conformance/parallel",
      parents: ["openshift/conformance"],
      qualifiers: ['tags["tier"] == "1"'],
    },
  ];
  const plain = spec("[sig-network] a");
  const serial = spec("[sig-network] b [Serial]");
  const sdn = spec("[sig-network] c", { source: "openshift:payload:sdn", labels: { SDN: {} } });
  const tagged = spec("[sig-network] d [Serial]", { tags: { tier: "1" } });

  it("ORs the qualifiers of the suite and of every suite naming it as a parent, transitively", () => {
    const inParallel = suiteMembership({ suite: "openshift/conformance/parallel", suites })!;
    expect([plain, serial, sdn, tagged].map(inParallel)).toEqual([true, false, true, true]);
    const inConformance = suiteMembership({ suite: "openshift/conformance", suites })!;
    expect(inConformance(sdn)).toBe(true);
    const inOvn = suiteMembership({ suite: "ovn-kubernetes/conformance/parallel", suites })!;
    expect([plain, sdn].map(inOvn)).toEqual([true, false]);
  });

  it("takes every test into a suite defined without qualifiers, and knows no undefined suite", () => {
    expect(suiteMembership({ suite: "all", suites: [{ name: "all" }] })!(serial)).toBe(true);
    expect(suiteMembership({ suite: "openshift/nope", suites })).toBeUndefined();
  });
});
