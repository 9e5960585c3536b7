import { BASELINES } from "@netstress/core/model/baselines.ts";
import { STRESS_COMMAND, type CommandLimits } from "./command.ts";
import { describeAllowedReleases } from "./describe-allowed-releases.ts";

/** The reply to `/test ?`: every command, with this repository's limits. */
export function renderHelp(limits: CommandLimits): string {
  return [
    "**network-stress commands** (each at the start of its own line; several per comment are fine)",
    "",
    "| command | what it does |",
    "| --- | --- |",
    `| \`${STRESS_COMMAND} [arch=${limits.arches.join(",")}] [iterations=N] [baseline=${BASELINES.join("\\|")}] [focus=TEXT] [suite=NAME] [upgrade-from=RELEASE]\` | stress-runs the networking e2e tests of this PR's head commit, one check run per architecture; N is 1 to ${limits.maxIterations}; \`focus\` keeps the tests whose name contains TEXT (quote it when it has spaces); \`suite\` runs the tests of a suite the test binaries define (e.g. openshift/conformance/parallel); \`upgrade-from\` makes an upgrade run (RELEASE is ${describeAllowedReleases(limits.releases)}): both arms' clusters start at that release and their [Upgrade] tests upgrade them to the PR payload and to the released one, so their disruption compares on equal footing ([Disruptive] tests included, one iteration per cluster) |`,
    `| \`${STRESS_COMMAND} more=N\` | adds N iterations (1 to ${limits.maxMore}) to the latest finished run of the head commit |`,
    `| \`${STRESS_COMMAND} abort\` | aborts the active runs of this PR |`,
    "| `/retest` | reruns the network-stress runs of the head commit that failed or errored |",
    "| `/ok-to-test` | lets the PR of an author outside the organization run (org members and collaborators with write access only) |",
    "| `/test ?` | shows this list |",
  ].join("\n");
}
