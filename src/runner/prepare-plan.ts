import { join } from "node:path";
import type { Arch } from "@netstress/core/arch/arch.ts";
import { environmentFlagArgs } from "../ote/environment-flag-args.ts";
import { environmentSelects } from "../ote/environment-selects.ts";
import { isEmptyEnvironment, type OteEnvironment } from "@netstress/core/model/ote-environment.ts";
import type { BinarySandbox } from "../ote/binary-sandbox.ts";
import type { InvokeBinaryOptions, InvokeBinaryOutcome } from "../ote/invoke-binary.ts";
import { getInfo } from "../ote/get-info.ts";
import { listTests } from "../ote/list-tests.ts";
import { parseGoDuration } from "@netstress/core/model/parse-go-duration.ts";
import { prepareBinary } from "../ote/prepare-binary.ts";
import type { Lifecycle } from "@netstress/core/model/ote-result-fields.ts";
import type { OteInfo, OteSpec } from "../ote/schemas.ts";
import { suiteMembership, type OteSuite } from "../ote/suite-membership.ts";
import { suiteSettings, type SuiteSettings } from "../ote/suite-settings.ts";
import type { ExecutionPlan, PlanComponent } from "@netstress/core/model/execution-plan.ts";
import type { Arm, SpecFacts } from "@netstress/core/model/result-record.ts";
import { RunnerError } from "./runner-error.ts";
import { specFacts } from "./spec-facts.ts";
import { testIsolation, type TestIsolation } from "./test-isolation.ts";

/** How many listed tests each filter left out of a component. */
export interface ExcludedCounts {
  environment: number;
  suite: number;
  disruptive: number;
  focus: number;
}

export interface PreparedComponent extends PlanComponent {
  arm: Arm;
  binary: string;
  /** Executable path after unpacking. */
  executable: string;
  sha256: string;
  info?: OteInfo;
  infoError?: string;
  /** What `list` printed that could not be read (those specs are left out), one message each. */
  listWarnings: string[];
  /** Selected test names, in listing order. */
  selected: string[];
  lifecycles: Map<string, Lifecycle>;
  /** Per selected test whose spec gives a readable `resources.timeout`: that timeout, in ms. */
  timeoutHints: Map<string, number>;
  /** Per selected test whose spec gives a readable `resources.duration`: that duration, in ms. */
  durationHints: Map<string, number>;
  /** Per selected test, the spec fields its records carry (originalName, labels, tags …). */
  specFacts: Map<string, SpecFacts>;
  isolation: Map<string, TestIsolation>;
  excluded: ExcludedCounts;
  /** EXTENSION_ARTIFACT_DIR of this component's executions, when artifacts are collected. */
  artifactDir?: string;
  /** The arm's upgrade target (NETSTRESS_UPGRADE_TARGET of its tests), when it has one. */
  upgradeTarget?: string;
}

export interface PreparedPlan {
  arch: Arch;
  components: PreparedComponent[];
  /** What the selected suite's definition says about running it (count, parallelism, timeout). */
  suiteSettings?: SuiteSettings;
}

interface DescribedBinary {
  executable: string;
  sha256: string;
  info?: OteInfo;
  infoError?: string;
  specs: OteSpec[];
  listWarnings: string[];
  /** With an environment: what the binary lists without one, so the report can say what it left out. */
  unfilteredNames?: string[];
}

/**
 * Makes every binary of the plan runnable, asks each who it is (`info`) and which tests it has for
 * the environment (`list` with the environment flags its API version knows, and once without to
 * count what the environment left out), and selects: the
 * plan's tests (or all), those the environmentSelector admits, the suite's members (suites compose
 * across binaries), no [Disruptive] test unless asked, and `focus` (a plain substring of the name).
 */
export async function preparePlan(options: {
  plan: ExecutionPlan;
  cacheDir: string;
  focus?: string;
  suite?: string;
  includeDisruptive?: boolean;
  environment?: OteEnvironment;
  /** Per arm and component, `<artifactsDir>/<arm>/<component>` becomes EXTENSION_ARTIFACT_DIR. */
  artifactsDir?: string;
  env?: NodeJS.ProcessEnv;
  sandbox?: BinarySandbox;
  /**
   * How `info` and `list` run (invokeBinary unless given): where the tests run through a process
   * spawner, so does every other start of the same binaries.
   */
  invoke?: (options: InvokeBinaryOptions) => Promise<InvokeBinaryOutcome>;
}): Promise<PreparedPlan> {
  const { plan, focus, env, suite, environment = {} } = options;
  const invocation = {
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    ...(options.invoke ? { invoke: options.invoke } : {}),
  };
  const byPath = new Map<string, Promise<DescribedBinary>>();
  const describe = (component: PlanComponent & { binary: string }) => {
    let pending = byPath.get(component.binary);
    if (!pending) {
      pending = (async () => {
        const prepared = await prepareBinary({
          path: component.binary,
          cacheDir: options.cacheDir,
          // A binary that runs as another user is copied where that user can execute it.
          ...(options.sandbox?.uid !== undefined ? { copy: true } : {}),
          arch: plan.arch,
        });
        const pendingInfo = getInfo({ binary: prepared.path, env, ...invocation }).then(
          (value) => ({ info: value }),
          (error: unknown) => ({ infoError: error instanceof Error ? error.message : String(error) }),
        );
        // `list`'s flags depend on info's API version only when there are flags at all: without
        // any, `list` runs beside `info` instead of after it.
        const pendingArgs =
          environmentFlagArgs({ environment }).length === 0
            ? Promise.resolve([])
            : pendingInfo.then((info) =>
                environmentFlagArgs({
                  environment,
                  apiVersion: "info" in info ? info.info.apiVersion : "v1.0",
                }),
              );
        const listWarnings: string[] = [];
        const [info, args, specs] = await Promise.all([
          pendingInfo,
          pendingArgs,
          pendingArgs.then((args) =>
            listTests({
              binary: prepared.path,
              env,
              args,
              ...invocation,
              onWarning: (message) => listWarnings.push(message),
            }),
          ),
        ]);
        const unfiltered =
          args.length > 0
            ? (await listTests({ binary: prepared.path, env, ...invocation })).map((s) => s.name)
            : undefined;
        return {
          executable: prepared.path,
          sha256: prepared.sha256,
          specs,
          listWarnings,
          ...(unfiltered ? { unfilteredNames: unfiltered } : {}),
          ...info,
        };
      })();
      byPath.set(component.binary, pending);
    }
    return pending;
  };

  const described = await Promise.all(
    plan.arms.flatMap(({ arm, components, upgradeTarget }) =>
      components.map(async (planned) => {
        if (planned.binary === undefined) {
          // The runner reads binaries from files: one named by its image is the executor's to fetch.
          throw new RunnerError(
            `${planned.component} (${arm}): the plan names its binary's image (${planned.image ?? "none"}), not a file; fetch it first`,
          );
        }
        const component = { ...planned, binary: planned.binary };
        return { arm, component, upgradeTarget, binary: await describe(component) };
      }),
    ),
  );
  const suites = [...new Set(described.map((d) => d.binary))].flatMap((b) => b.info?.suites ?? []);
  const inSuite = suite === undefined ? undefined : membership(suite, suites);
  const settings = suite === undefined ? undefined : suiteSettings({ suite, suites });
  // A suite expected to disrupt the cluster asks for its [Disruptive] tests by being run.
  const includeDisruptive = options.includeDisruptive || settings?.disruptive === true;

  const components = described.map(({ arm, component, upgradeTarget, binary }): PreparedComponent => {
    const { specs, unfilteredNames, ...identity } = binary;
    const unknown = (component.tests ?? []).filter((t) => !specs.some((s) => s.name === t));
    if (unknown.length > 0) {
      throw new RunnerError(
        `${component.component} (${arm}): the binary does not list ${unknown.length} planned test(s), e.g. "${unknown[0]}"` +
          (isEmptyEnvironment(environment) ? "" : " (it lists tests for the environment it is given)"),
      );
    }
    const wanted = component.tests ? new Set(component.tests) : undefined;
    const listed = new Set(specs.map((s) => s.name));
    const droppedByBinary = (unfilteredNames ?? []).filter(
      (n) => !listed.has(n) && (!wanted || wanted.has(n)),
    );
    const excluded: ExcludedCounts = {
      environment: droppedByBinary.length,
      suite: 0,
      disruptive: 0,
      focus: 0,
    };
    const selected: OteSpec[] = [];
    const isolation = new Map<string, TestIsolation>();
    for (const spec of specs) {
      if (wanted && !wanted.has(spec.name)) continue;
      const classified = testIsolation(spec);
      if (!admitted(spec, component, environment)) excluded.environment += 1;
      else if (inSuite && !inSuite(spec)) excluded.suite += 1;
      else if (classified.alone === "disruptive" && !includeDisruptive) excluded.disruptive += 1;
      else if (focus && !spec.name.includes(focus)) excluded.focus += 1;
      else {
        selected.push(spec);
        isolation.set(spec.name, classified);
      }
    }
    return {
      ...component,
      arm,
      ...identity,
      selected: selected.map((s) => s.name),
      lifecycles: new Map(specs.map((s) => [s.name, s.lifecycle])),
      specFacts: new Map(selected.map((s) => [s.name, specFacts(s)])),
      timeoutHints: hints(selected, (s) => s.resources.timeout),
      durationHints: hints(selected, (s) => s.resources.duration),
      isolation,
      excluded,
      ...(options.artifactsDir ? { artifactDir: join(options.artifactsDir, arm, component.component) } : {}),
      ...(upgradeTarget ? { upgradeTarget } : {}),
    };
  });
  if (components.every((c) => c.selected.length === 0)) throw nothingSelected(components, options);
  return { arch: plan.arch, components, ...(settings ? { suiteSettings: settings } : {}) };
}

/** Per spec whose field is a readable, non-zero Go duration: that duration in whole ms. */
function hints(specs: readonly OteSpec[], field: (spec: OteSpec) => string | null | undefined) {
  return new Map(
    specs.flatMap((s) => {
      const text = field(s);
      const ms = text ? parseGoDuration(text) : undefined;
      return ms ? [[s.name, Math.ceil(ms)] as const] : [];
    }),
  );
}

function membership(suite: string, suites: readonly OteSuite[]): (spec: OteSpec) => boolean {
  let inSuite: ((spec: OteSpec) => boolean) | undefined;
  try {
    inSuite = suiteMembership({ suite, suites });
  } catch (error) {
    throw new RunnerError(`suite ${suite}: ${(error as Error).message}`);
  }
  if (!inSuite) {
    const known = [...new Set(suites.flatMap((s) => [s.name, ...(s.parents ?? [])]))].sort();
    throw new RunnerError(
      `no binary of the plan advertises the suite "${suite}"; ` +
        (known.length ? `known suites: ${known.join(", ")}` : "the binaries advertise no suites"),
      { usage: true },
    );
  }
  return inSuite;
}

function admitted(spec: OteSpec, component: PlanComponent, environment: OteEnvironment): boolean {
  try {
    return environmentSelects({ selector: spec.environmentSelector, environment });
  } catch (error) {
    throw new RunnerError(
      `${component.component}: the environmentSelector of "${spec.name}" cannot be evaluated: ${(error as Error).message}`,
    );
  }
}

function nothingSelected(
  components: readonly PreparedComponent[],
  options: { focus?: string; suite?: string },
): RunnerError {
  const total = (key: keyof ExcludedCounts) => components.reduce((n, c) => n + c.excluded[key], 0);
  const reasons = [
    total("environment") && `${total("environment")} excluded by their environmentSelector`,
    total("suite") && `${total("suite")} outside suite "${options.suite}"`,
    total("disruptive") && `${total("disruptive")} [Disruptive] (run them with --include-disruptive)`,
    total("focus") && `${total("focus")} without "${options.focus}" in their name (check --focus)`,
  ].filter(Boolean);
  return new RunnerError(
    reasons.length ? `the plan selects no tests: ${reasons.join("; ")}` : "the plan selects no tests",
    { usage: options.focus !== undefined || options.suite !== undefined || total("disruptive") > 0 },
  );
}
