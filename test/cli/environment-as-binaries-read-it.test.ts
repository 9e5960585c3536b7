import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostArch } from "@netstress/core/arch/arch.ts";
import { selectionFromFlags } from "../../src/cli/selection-options.ts";
import { UsageError } from "../../src/cli/usage-error.ts";
import { environmentFlagArgs } from "../../src/ote/environment-flag-args.ts";
import { readFlagMap } from "../../src/ote/read-flag-map.ts";
import { preparePlan } from "../../src/runner/prepare-plan.ts";
import { fixtureInfo, fixtureSpec, writeProtocolFixture } from "../helpers/protocol-fixture-binary.ts";
import { tempDir } from "../helpers/temp-dir.ts";

const CONSOLE = "[sig-network] needs the Console capability";
const LOCAL_GATEWAY = "[sig-network] needs the local gateway mode fact";

let dir: { path: string; remove: () => Promise<void> };
let binary: string;

beforeAll(async () => {
  dir = await tempDir();
  // The framework's own selector helpers (OptionalCapabilityExists, FactEquals).
  binary = await writeProtocolFixture(join(dir.path, "capabilities-tests-ext"), {
    info: fixtureInfo("capabilities"),
    listLines: [
      fixtureSpec(CONSOLE, {
        environmentSelector: { include: 'optionalCapabilities.exists(oc, oc=="Console")' },
      }),
      fixtureSpec(LOCAL_GATEWAY, {
        environmentSelector: {
          include: '(fact_keys.exists(k, k=="gateway") && facts["gateway"].matches("local"))',
        },
      }),
    ],
  });
});
afterAll(() => dir.remove());

const selected = async (environmentFlags: string[]) => {
  const environment = selectionFromFlags({ environment: environmentFlags })?.environment;
  const prepared = await preparePlan({
    plan: { arch: hostArch(), arms: [{ arm: "pr", components: [{ component: "capabilities", binary }] }] },
    cacheDir: join(dir.path, "cache"),
    ...(environment ? { environment } : {}),
    env: { ...process.env, KUBECONFIG: "" },
  });
  return prepared.components[0]!.selected;
};

describe("--environment values read as the binaries' flag parser reads them", () => {
  it("splits optional-capability=Build,Console into two capabilities, as pflag's StringSlice does", async () => {
    expect(selectionFromFlags({ environment: ["optional-capability=Build,Console"] })?.environment).toEqual({
      optionalCapabilities: ["Build", "Console"],
    });
    expect(await selected(["optional-capability=Build,Console", "fact=gateway=shared"])).toEqual([CONSOLE]);
  });

  it("keeps api-group and feature-gate values whole, as pflag's StringArray does", () => {
    expect(
      selectionFromFlags({ environment: ["feature-gate=A,B", "api-group=route.openshift.io,x"] })
        ?.environment,
    ).toEqual({ featureGates: ["A,B"], apiGroups: ["route.openshift.io,x"] });
  });

  it("reads fact=a=1,b=2 as two facts and fact=zone=a,b as one, as pflag's StringToString does", async () => {
    expect(
      selectionFromFlags({ environment: ["fact=gateway=local,zone=a", "fact=zones=a,b"] })?.environment,
    ).toEqual({ facts: { gateway: "local", zone: "a", zones: "a,b" } });
    expect(await selected(["fact=gateway=local,zone=a", "optional-capability=Build"])).toEqual([
      LOCAL_GATEWAY,
    ]);
    expect(() => selectionFromFlags({ environment: ["fact=a=1,b,c=2"] })).toThrow(UsageError);
    expect(() => selectionFromFlags({ environment: ["fact=a=1,b,c=2"] })).toThrow(
      /"b" .* must be formatted as key=value/,
    );
  });

  it("passes each fact so the binary reads back exactly that fact", () => {
    const facts = { gateway: "local", zones: "a,b", expression: "x=1,y=2", quoted: 'say "hi"=now, then' };
    const args = environmentFlagArgs({ environment: { facts } });
    const readBack = args.reduce<Record<string, string>>(
      (read, arg) => ({ ...read, ...readFlagMap(arg.slice("--fact=".length)) }),
      {},
    );
    expect(readBack).toEqual(facts);
    expect(args).toContain('--fact="expression=x=1,y=2"');
    expect(args).toContain("--fact=zones=a,b");
  });
});

describe("readFlagMap", () => {
  it("follows pflag's StringToString on the cases its own tests cover", () => {
    expect(readFlagMap("a=1")).toEqual({ a: "1" });
    expect(readFlagMap('"a=1,2"')).toEqual({ a: "1,2" });
    expect(readFlagMap("a=1,b=2")).toEqual({ a: "1", b: "2" });
    expect(readFlagMap('"a=1,2",b=2')).toEqual({ a: "1,2", b: "2" });
    expect(readFlagMap('a=1,"b=2,3"')).toEqual({ a: "1", b: "2,3" });
    expect(() => readFlagMap("a")).toThrow(/must be formatted as key=value/);
    expect(() => readFlagMap('a=1,b="2=3')).toThrow(/"/);
  });
});
