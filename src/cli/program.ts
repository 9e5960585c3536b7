import { Command } from "commander";

type Register = (program: Command) => void;

/**
 * Every `netstress` command; each lives in commands/<name>.ts and registers itself, so that this
 * table shows the whole surface at a glance. Loaded on demand: a test binary invoked once per test
 * (`netstress ext`) or an in-pod runner should not load the bot's server to parse its flags.
 */
const COMMANDS: Record<string, () => Promise<Register>> = {
  plan: async () => (await import("./commands/plan.ts")).registerPlanCommand,
  payload: async () => (await import("./commands/payload.ts")).registerPayloadCommand,
  run: async () => (await import("./commands/run.ts")).registerRunCommand,
  analyze: async () => (await import("./commands/analyze.ts")).registerAnalyzeCommand,
  decide: async () => (await import("./commands/decide.ts")).registerDecideCommand,
  "plan-power": async () => (await import("./commands/plan-power.ts")).registerPlanPowerCommand,
  demo: async () => (await import("./commands/demo.ts")).registerDemoCommand,
  serve: async () => (await import("./commands/serve.ts")).registerServeCommand,
  trends: async () => (await import("./commands/trends.ts")).registerTrendsCommand,
  lab: async () => (await import("./commands/lab.ts")).registerLabCommand,
  ext: async () => (await import("./commands/ext.ts")).registerExtCommand,
};

/**
 * Builds the `netstress` command line for `argv`: the named command alone when there is one,
 * every command for help, suggestions and errors.
 */
export async function buildProgram(argv: readonly string[] = process.argv): Promise<Command> {
  const program = new Command("netstress")
    .description("Stress-run OpenShift networking e2e test binaries and compare PR against released payload")
    .showHelpAfterError()
    .exitOverride();
  const named = argv[2];
  const names = named !== undefined && Object.hasOwn(COMMANDS, named) ? [named] : Object.keys(COMMANDS);
  for (const register of await Promise.all(names.map((name) => COMMANDS[name]!()))) register(program);
  return program;
}
