import type { Command } from "commander";
import { oteEnvironmentSchema, type OteEnvironment } from "@netstress/core/model/ote-environment.ts";
import { readFlagMap } from "../ote/read-flag-map.ts";
import type { TestSelection } from "@netstress/core/model/execution-plan.ts";
import { UsageError } from "./usage-error.ts";

export interface SelectionFlags {
  suite?: string;
  includeDisruptive?: boolean;
  environment: string[];
}

/** Environment flag names of openshift-tests-extension binaries, and where each value goes. */
const SINGLE: Record<string, keyof OteEnvironment> = {
  platform: "platform",
  network: "network",
  "network-stack": "networkStack",
  architecture: "architecture",
  topology: "topology",
  upgrade: "upgrade",
  version: "version",
  "external-connectivity": "externalConnectivity",
};
const REPEATED: Record<string, "optionalCapabilities" | "apiGroups" | "featureGates"> = {
  "optional-capability": "optionalCapabilities",
  "api-group": "apiGroups",
  "feature-gate": "featureGates",
};

const collect = (value: string, previous: string[]) => [...previous, value];

/** Adds --suite, --include-disruptive and --environment (the binaries' environment flags). */
export function addSelectionOptions(command: Command): Command {
  return command
    .option(
      "--suite <NAME>",
      "run the tests of this suite, as the binaries' `info` defines it (parents included)",
    )
    .option("--include-disruptive", "also run [Disruptive] tests (each alone on the cluster)")
    .option(
      "--environment <FLAG=VALUE>",
      `the cluster's environment for \`list\` and environmentSelectors, by the binaries' flag names (${[
        ...Object.keys(SINGLE),
        ...Object.keys(REPEATED),
        "fact",
      ].join(
        ", ",
      )}; fact=KEY=VALUE); repeatable; read from the cluster under test when KUBECONFIG is set, these win`,
      collect,
      [],
    );
}

/** The selection the flags ask for, or undefined when they ask for none. */
export function selectionFromFlags(flags: SelectionFlags): TestSelection | undefined {
  const environment = parseEnvironment(flags.environment);
  const selection: TestSelection = {
    ...(flags.suite !== undefined ? { suite: flags.suite } : {}),
    ...(flags.includeDisruptive ? { includeDisruptive: true } : {}),
    ...(environment ? { environment } : {}),
  };
  return Object.keys(selection).length > 0 ? selection : undefined;
}

function parseEnvironment(values: readonly string[]): OteEnvironment | undefined {
  if (values.length === 0) return undefined;
  const environment: Record<string, unknown> = {};
  for (const text of values) {
    const eq = text.indexOf("=");
    const flag = text.slice(0, eq).trim();
    const value = text.slice(eq + 1).trim();
    if (eq <= 0 || value === "") {
      throw new UsageError(
        `--environment expects FLAG=VALUE (e.g. --environment platform=aws), got "${text}"`,
      );
    }
    const single = SINGLE[flag];
    const repeated = REPEATED[flag];
    if (single) {
      if (environment[single] !== undefined) throw new UsageError(`--environment gives ${flag} twice`);
      environment[single] = value;
    } else if (repeated) {
      environment[repeated] = [...((environment[repeated] as string[] | undefined) ?? []), value];
    } else if (flag === "fact") {
      // Read as the binary's --fact reads it: "a=1,b=2" is two facts, "zone=a,b" one.
      let facts: Record<string, string>;
      try {
        facts = readFlagMap(value);
      } catch (error) {
        throw new UsageError(`--environment fact=KEY=VALUE: ${(error as Error).message}`);
      }
      environment.facts = { ...(environment.facts as Record<string, string> | undefined), ...facts };
    } else {
      const known = [...Object.keys(SINGLE), ...Object.keys(REPEATED), "fact"].join(", ");
      throw new UsageError(`--environment: "${flag}" is not an environment flag; use one of ${known}`);
    }
  }
  const parsed = oteEnvironmentSchema.safeParse(environment);
  if (!parsed.success) throw new UsageError(`--environment: ${parsed.error.issues[0]?.message ?? "invalid"}`);
  return parsed.data;
}
