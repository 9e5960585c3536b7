import { Option, type Command } from "commander";
import type { LabName } from "@netstress/testbed/lab/lab-name.ts";
import { importTestbed } from "../import-testbed.ts";
import { parseCount } from "../parse-options.ts";
import { UsageError } from "../usage-error.ts";

interface UpFlags {
  name: LabName;
  nodes: string;
  build: string;
}

/** `netstress lab …`: a network of Linux network namespaces with a fake Kubernetes API (docs/lab.md). */
export function registerLabCommand(program: Command): void {
  const lab = program
    .command("lab")
    .description(
      "A real network of Linux network namespaces with a fake Kubernetes API, to test network tests on (root)",
    )
    // The lab is the test bed's, which the bot's image leaves out: it is loaded, and a lab's name
    // checked, before any lab command's action runs.
    .hook("preAction", async (_lab, action) => {
      const { parseLabName } = await importTestbed("lab", () => import("@netstress/testbed/lab/lab-name.ts"));
      const name: unknown = action.getOptionValue("name");
      if (typeof name === "string") action.setOptionValue("name", parseLabName(name));
    });
  lab
    .command("up")
    .description("Start a lab in the foreground; Ctrl-C tears it down")
    .addOption(labNameOption("the lab's name, the prefix of its namespaces (two labs need two names)"))
    .option("--nodes <N>", "nodes", "3")
    .option(
      "--build <BUILD>",
      "the payload it runs: released, or pr (its node agent drops routes for ~2 s on restart)",
      "released",
    )
    .action(async (flags: UpFlags) => {
      process.exitCode = await labUp(flags);
    });
  lab
    .command("down")
    .description("Remove what a lab left behind (a crashed one's namespaces and processes)")
    .addOption(labNameOption("the lab's name"))
    .action(async (flags: { name: LabName }) => {
      const [{ removeLabNamespaces }, { readLabState, releaseLab, processAlive }] = await Promise.all([
        import("@netstress/testbed/lab/remove-lab-namespaces.ts"),
        import("@netstress/testbed/lab/lab-state.ts"),
      ]);
      const state = await readLabState(flags.name);
      if (state && processAlive(state.pid) && state.pid !== process.pid) {
        process.kill(state.pid, "SIGTERM");
        process.stderr.write(`lab ${flags.name} runs in process ${state.pid}: asked it to stop (SIGTERM)\n`);
      }
      const removed = await removeLabNamespaces(flags.name);
      await releaseLab(flags.name);
      process.stdout.write(
        `lab ${flags.name}: removed ${removed.namespaces.length} network namespaces, killed ${removed.processes} processes\n`,
      );
    });
  lab
    .command("status")
    .description("List labs: running or left over")
    .action(async () => {
      const [{ listLabNames, readLabState, processAlive }, { labNamespaces }, { runIp }] = await Promise.all([
        import("@netstress/testbed/lab/lab-state.ts"),
        import("@netstress/testbed/lab/remove-lab-namespaces.ts"),
        import("@netstress/testbed/lab/run-ip.ts"),
      ]);
      const list = await runIp(["netns", "list"]).catch(() => "");
      const names = await listLabNames();
      if (names.length === 0) process.stdout.write("no labs\n");
      for (const name of names) {
        const state = await readLabState(name);
        const namespaces = labNamespaces(name, list).length;
        const running = state !== undefined && processAlive(state.pid);
        process.stdout.write(
          `${name}\t${running ? `running (pid ${state.pid}, ${state.build}, ${state.nodes.length} nodes)` : "left over: netstress lab down --name " + name}\t${namespaces} namespaces\t${state?.kubeconfigPath ?? ""}\n`,
        );
      }
    });
  lab
    .command("agent", { hidden: true })
    .description("The lab's node agent (ovnkube-node): programs routes to the other nodes' pods")
    .option("--build <BUILD>", "released or pr", "released")
    .action(async (flags: { build: string }) => {
      if (flags.build !== "released" && flags.build !== "pr") {
        throw new UsageError(`--build is released or pr, not "${flags.build}"`);
      }
      const build = flags.build;
      const [{ runNodeAgent, AGENT_HEALTH_PORT }, { labApiClient }, { labLogLine }] = await Promise.all([
        import("@netstress/testbed/lab/run-node-agent.ts"),
        import("@netstress/testbed/lab/lab-api-client.ts"),
        import("@netstress/testbed/lab/lab-log-line.ts"),
      ]);
      await runNodeAgent({
        build,
        nodeName: requiredEnv("NODE_NAME"),
        api: labApiClient(requiredEnv("KUBECONFIG")),
        signal: stopSignal(),
        log: (message, fields) => process.stdout.write(labLogLine(message, fields)),
        healthPort: AGENT_HEALTH_PORT,
      });
    });
  lab
    .command("node-helper", { hidden: true })
    .description(
      "A lab node's own processes in one: its Service proxy and its kubelet's readiness prober (driven over the IPC channel)",
    )
    .action(async () => {
      const [{ runServiceProxy }, { runProbe }, { labApiClient }, { labLogLine }] = await Promise.all([
        import("@netstress/testbed/lab/run-service-proxy.ts"),
        import("@netstress/testbed/lab/run-prober.ts"),
        import("@netstress/testbed/lab/lab-api-client.ts"),
        import("@netstress/testbed/lab/lab-log-line.ts"),
      ]);
      if (!process.send) throw new UsageError("the node helper is started by the lab, with an IPC channel");
      const log = (message: string, fields?: Record<string, unknown>) =>
        process.stdout.write(labLogLine(message, fields));
      let stopped = false;
      let wake = () => undefined as void;
      let told: string | undefined;
      process.on(
        "message",
        (message: ({ id: number } & Parameters<typeof runProbe>[0]) | { proxy: "stop" | "start" }) => {
          if ("proxy" in message) {
            stopped = message.proxy === "stop";
            told = undefined;
            return wake();
          }
          void runProbe(message).then((ok) => process.send?.({ id: message.id, ok }));
        },
      );
      // The lab gone, the channel closes: so does the helper.
      process.on("disconnect", () => process.exit(0));
      await runServiceProxy({
        api: labApiClient(requiredEnv("KUBECONFIG")),
        signal: stopSignal(),
        log,
        onSynced: () => log("ready"),
        stopped: () => stopped,
        onState: (state) => {
          if (told === state) return;
          told = state;
          process.send?.({ proxy: state });
        },
        wakeable: (fn) => (wake = fn),
      });
    });
  lab
    .command("control-plane", { hidden: true })
    .description("The lab's ovnkube-control-plane: leader election through a Lease")
    .action(async () => {
      const [{ runControlPlane }, { labApiClient }, { labLogLine }] = await Promise.all([
        import("@netstress/testbed/lab/run-control-plane.ts"),
        import("@netstress/testbed/lab/lab-api-client.ts"),
        import("@netstress/testbed/lab/lab-log-line.ts"),
      ]);
      await runControlPlane({
        api: labApiClient(requiredEnv("KUBECONFIG")),
        namespace: requiredEnv("POD_NAMESPACE"),
        identity: requiredEnv("POD_NAME"),
        signal: stopSignal(),
        log: (message, fields) => process.stdout.write(labLogLine(message, fields)),
      });
    });
  lab
    .command("relay", { hidden: true })
    .description("The lab's API relay: a TCP address to a unix socket")
    .requiredOption("--listen <HOST:PORT>", "where to listen")
    .requiredOption("--unix <PATH>", "the socket to relay to")
    .action(async (flags: { listen: string; unix: string }) => {
      const [{ startRelay }, { labLogLine }] = await Promise.all([
        import("@netstress/testbed/lab/start-relay.ts"),
        import("@netstress/testbed/lab/lab-log-line.ts"),
      ]);
      const [host, port] = flags.listen.split(":");
      const relay = await startRelay({
        listen: { host: host!, port: parseCount("--listen port", port ?? "", { max: 65535 }) },
        to: { path: flags.unix },
      });
      process.stdout.write(labLogLine("ready", { listen: flags.listen }));
      const signal = stopSignal();
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      await relay.close();
    });
}

/** `--name`, checked before the action runs (the lab command's hook): every action gets a LabName. */
function labNameOption(description: string): Option {
  return new Option("--name <NAME>", description).default("lab");
}

function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new UsageError(`${name} is not set: the lab sets it for its own processes`);
  return value;
}

/** Aborts on SIGTERM or SIGINT, so that a lab program wraps up and exits 0. */
function stopSignal(): AbortSignal {
  const controller = new AbortController();
  for (const signal of ["SIGTERM", "SIGINT"] as const) process.once(signal, () => controller.abort());
  return controller.signal;
}

async function labUp(flags: UpFlags): Promise<number> {
  const nodes = parseCount("--nodes", flags.nodes, { max: 50 });
  if (flags.build !== "released" && flags.build !== "pr") {
    throw new UsageError(`--build is released or pr, not "${flags.build}"`);
  }
  const [{ startLab }, { checkLabAvailable }] = await Promise.all([
    import("@netstress/testbed/lab/start-lab.ts"),
    import("@netstress/testbed/lab/check-lab-available.ts"),
  ]);
  await checkLabAvailable();
  const say = (text: string) => process.stderr.write(`${text}\n`);
  say(`starting lab ${flags.name}: ${nodes} nodes, ${flags.build} payload …`);
  const lab = await startLab({
    name: flags.name,
    nodes,
    build: flags.build,
    logger: {
      info: () => undefined,
      warn: (fields, message) => say(`${message} ${JSON.stringify(fields)}`),
    },
  });
  for (const node of lab.nodes) say(`  ${node.name}\t${node.ip}\tpods ${node.podCIDR}\tnetns ${node.netns}`);
  say(
    `  API: ${lab.api.url} (from the lab's namespaces: https://${lab.apiAddress.host}:${lab.apiAddress.port})`,
  );
  say(`  Services: ${lab.plan.serviceCIDR}`);
  say(`\nkubectl --kubeconfig ${lab.kubeconfigPath} get nodes,pods -A\nCtrl-C tears the lab down.`);
  process.stdout.write(`${lab.kubeconfigPath}\n`);
  // startLab tears down and exits on SIGINT/SIGTERM; until then, run.
  await new Promise(() => undefined);
  return 0;
}
