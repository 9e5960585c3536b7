import { compileCel } from "./compile-cel.ts";
import { isEmptyEnvironment, type OteEnvironment } from "@netstress/core/model/ote-environment.ts";
import type { OteEnvironmentSelector } from "./schemas.ts";

/** The variables openshift-tests-extension gives `environmentSelector` expressions. */
const ENVIRONMENT_VARIABLES = {
  apiGroups: "list<string>",
  architecture: "string",
  externalConnectivity: "string",
  fact_keys: "list<string>",
  facts: "map<string, string>",
  featureGates: "list<string>",
  network: "string",
  networkStack: "string",
  optionalCapabilities: "list<string>",
  platform: "string",
  topology: "string",
  upgrade: "string",
  version: "string",
};

const compiled = new Map<string, ReturnType<typeof compileCel>>();

/**
 * Whether a spec's environmentSelector admits an environment, as the binaries' own `list` filter
 * decides: every test in an empty environment; otherwise excluded when `exclude` is true, and
 * kept when `include` is absent or true. Unset fields read as "" and empty lists.
 */
export function environmentSelects(options: {
  selector: OteEnvironmentSelector;
  environment: OteEnvironment;
}): boolean {
  const { selector, environment } = options;
  if (isEmptyEnvironment(environment) || (!selector.include && !selector.exclude)) return true;
  const facts = environment.facts ?? {};
  const values = {
    apiGroups: environment.apiGroups ?? [],
    architecture: environment.architecture ?? "",
    externalConnectivity: environment.externalConnectivity ?? "",
    fact_keys: Object.keys(facts),
    facts,
    featureGates: environment.featureGates ?? [],
    network: environment.network ?? "",
    networkStack: environment.networkStack ?? "",
    optionalCapabilities: environment.optionalCapabilities ?? [],
    platform: environment.platform ?? "",
    topology: environment.topology ?? "",
    upgrade: environment.upgrade ?? "",
    version: environment.version ?? "",
  };
  const evaluate = (expression: string) => {
    let predicate = compiled.get(expression);
    if (!predicate) {
      predicate = compileCel({ expression, variables: ENVIRONMENT_VARIABLES });
      compiled.set(expression, predicate);
    }
    return predicate(values);
  };
  if (selector.exclude && evaluate(selector.exclude)) return false;
  return selector.include ? evaluate(selector.include) : true;
}
