import { DISRUPTIVE_SUITE, INVARIANT_SUITE, UPGRADE_SUITE } from "./network-tests.ts";

export const EXTENSION_NAME = "netstress-network-tests";
const COMPONENT = { product: "netstress", type: "extension", name: EXTENSION_NAME } as const;
/** `product:type:name`, each spec's `source`, as openshift-tests-extension derives it. */
export const EXTENSION_SOURCE = `${COMPONENT.product}:${COMPONENT.type}:${COMPONENT.name}`;

/** The build this binary came from (the SEA build stamps it; from the sources it is unknown). */
export interface ExtensionBuild {
  commit: string;
  buildDate: string;
  gitTreeState: string;
}

const only = (marker: string) => `source == "${EXTENSION_SOURCE}" && name.contains("${marker}")`;

/** `info`: the extension's identity and suites, in openshift-tests-extension's format (API v1.1). */
export function extensionInfo(build: ExtensionBuild): object {
  return {
    apiVersion: "v1.1",
    source: {
      commit: build.commit,
      build_date: build.buildDate,
      git_tree_state: build.gitTreeState,
    },
    component: COMPONENT,
    suites: [
      {
        name: INVARIANT_SUITE,
        description:
          "Each network path stays reachable for the whole iteration (runs beside every other test)",
        qualifiers: [only("[Invariant]")],
      },
      {
        name: DISRUPTIVE_SUITE,
        description:
          "Every network path stays reachable while the node agent or the control-plane leader restarts",
        qualifiers: [`${only("[Disruptive]")} && !name.contains("[Upgrade]")`],
        clusterStability: "Disruptive",
      },
      {
        name: UPGRADE_SUITE,
        description:
          "Every network path stays reachable while the cluster upgrades to NETSTRESS_UPGRADE_TARGET",
        qualifiers: [only("[Upgrade]")],
        clusterStability: "Disruptive",
      },
    ],
    images: [],
  };
}
