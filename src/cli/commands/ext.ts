import type { Command } from "commander";

/**
 * `netstress ext …`: the project's own openshift-tests-extension, `netstress-network-tests`
 * (info, list, run-test, images) and the probe pods' `probe-server`. Its arguments are the
 * extension's own (pflag conventions), passed through untouched.
 */
export function registerExtCommand(program: Command): void {
  program
    .command("ext")
    .description(
      "The netstress-network-tests OTE extension: info | list | run-test | images | probe-server (see docs/network-tests.md)",
    )
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .argument("[args...]", "the extension's command and flags")
    .action(async (args: string[]) => {
      const { extMain } = await import("@netstress/network-extension/ext-main.ts");
      process.exitCode = await extMain(args);
    });
}
