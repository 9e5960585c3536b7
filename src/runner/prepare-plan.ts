import type { Arch } from "../arch/arch.ts";
import { getInfo } from "../ote/get-info.ts";
import { listTests } from "../ote/list-tests.ts";
import { prepareBinary } from "../ote/prepare-binary.ts";
import type { Lifecycle, OteInfo } from "../ote/schemas.ts";
import type { ExecutionPlan, PlanComponent } from "./execution-plan.ts";
import type { Arm } from "./result-record.ts";
import { RunnerError } from "./runner-error.ts";

export interface PreparedComponent extends PlanComponent {
  arm: Arm;
  /** Executable path after unpacking. */
  executable: string;
  sha256: string;
  info?: OteInfo;
  infoError?: string;
  /** Selected test names, in listing order. */
  selected: string[];
  lifecycles: Map<string, Lifecycle>;
}

export interface PreparedPlan {
  arch: Arch;
  components: PreparedComponent[];
}

/**
 * Makes every binary of the plan runnable and asks each which tests it has; selects the plan's
 * tests (or all), narrowed by `focus` (a plain substring of the test name).
 */
export async function preparePlan(options: {
  plan: ExecutionPlan;
  cacheDir: string;
  focus?: string;
  env?: NodeJS.ProcessEnv;
}): Promise<PreparedPlan> {
  const { plan, focus, env } = options;
  const byPath = new Map<
    string,
    Promise<Omit<PreparedComponent, keyof PlanComponent | "arm" | "selected">>
  >();
  const describe = (component: PlanComponent) => {
    let pending = byPath.get(component.binary);
    if (!pending) {
      pending = (async () => {
        const prepared = await prepareBinary({
          path: component.binary,
          cacheDir: options.cacheDir,
          arch: plan.arch,
        });
        const specs = await listTests({ binary: prepared.path, env });
        const info = await getInfo({ binary: prepared.path, env }).then(
          (value) => ({ info: value }),
          (error: unknown) => ({ infoError: error instanceof Error ? error.message : String(error) }),
        );
        return {
          executable: prepared.path,
          sha256: prepared.sha256,
          lifecycles: new Map(specs.map((s) => [s.name, s.lifecycle])),
          ...info,
        };
      })();
      byPath.set(component.binary, pending);
    }
    return pending;
  };

  const components = await Promise.all(
    plan.arms.flatMap(({ arm, components }) =>
      components.map(async (component): Promise<PreparedComponent> => {
        const described = await describe(component);
        const listed = [...described.lifecycles.keys()];
        const unknown = (component.tests ?? []).filter((t) => !described.lifecycles.has(t));
        if (unknown.length > 0) {
          throw new RunnerError(
            `${component.component} (${arm}): the binary does not list ${unknown.length} planned test(s), e.g. "${unknown[0]}"`,
          );
        }
        const wanted = component.tests ? new Set(component.tests) : undefined;
        const selected = listed.filter(
          (name) => (!wanted || wanted.has(name)) && (!focus || name.includes(focus)),
        );
        return { ...component, arm, ...described, selected };
      }),
    ),
  );
  if (components.every((c) => c.selected.length === 0)) {
    throw new RunnerError(
      focus ? `no test name contains "${focus}"; check --focus` : "the plan selects no tests",
      { usage: focus !== undefined },
    );
  }
  return { arch: plan.arch, components };
}
