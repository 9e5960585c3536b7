import { Command } from "commander";
import { registerDemoCommand } from "./commands/demo.ts";
import { registerLabCommand } from "./commands/lab.ts";
import { registerAnalyzeCommand } from "./commands/analyze.ts";
import { registerExtCommand } from "./commands/ext.ts";
import { registerPayloadCommand } from "./commands/payload.ts";
import { registerPlanCommand } from "./commands/plan.ts";
import { registerRunCommand } from "./commands/run.ts";
import { registerServeCommand } from "./commands/serve.ts";
import { registerTrendsCommand } from "./commands/trends.ts";

/**
 * Builds the `netstress` command line. Each command lives in commands/<name>.ts and registers
 * itself here, so that this file shows the whole surface at a glance.
 */
export function buildProgram(): Command {
  const program = new Command("netstress")
    .description("Stress-run OpenShift networking e2e test binaries and compare PR against released payload")
    .showHelpAfterError()
    .exitOverride();
  registerPlanCommand(program);
  registerPayloadCommand(program);
  registerRunCommand(program);
  registerAnalyzeCommand(program);
  registerDemoCommand(program);
  registerServeCommand(program);
  registerTrendsCommand(program);
  registerLabCommand(program);
  registerExtCommand(program);
  return program;
}
