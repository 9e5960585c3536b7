import { ExtError } from "./ext-error.ts";
import { readExtSettings } from "./ext-settings.ts";
import { EXTENSION_NAME, EXTENSION_SOURCE, extensionInfo, type ExtensionBuild } from "./extension-info.ts";
import { networkTests, type NetworkTest } from "./network-tests.ts";
import type { OteResultLine } from "./ote-result.ts";
import type { ProbeCluster } from "./probe-cluster.ts";
import { runNetworkTests } from "./run-network-tests.ts";
import { runProbeServer } from "./run-probe-server.ts";

export interface ExtensionIo {
  argv: readonly string[];
  env: NodeJS.ProcessEnv;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Names piped on stdin (run-test without -n); undefined when stdin is a terminal. */
  readStdin: () => Promise<string | undefined>;
  /** Aborts on SIGTERM or SIGINT. */
  signal: AbortSignal;
  cluster: (kubeconfig: string) => Promise<ProbeCluster>;
  build: ExtensionBuild;
}

// The environment flags openshift-tests passes to `list` (pflag: --name=value or --name value).
const ENVIRONMENT_FLAGS = new Set([
  "platform",
  "network",
  "network-stack",
  "upgrade",
  "topology",
  "architecture",
  "installer",
  "config",
  "fact",
  "version",
  "external-connectivity",
  "optional-capability",
  "api-group",
  "feature-gate",
]);

const USAGE = `usage: ${EXTENSION_NAME}-ext <command>
  info                              the extension's identity and suites (JSON)
  list [tests|suites] [-o json|jsonl|names] [--suite NAME] [environment flags]
  run-test [-n NAME]... [NAME] [-o json|jsonl]   names may also come on stdin, one a line
  images                            images the tests use (JSON)
  probe-server --port N [--name LABEL] [--targets JSON] [--interval-ms N] [--timeout-ms N]
`;

/**
 * The openshift-tests-extension command line of `netstress-network-tests` (as `netstress ext …`
 * and as the standalone binary): info, list, run-test, images, and the probe pods' probe-server.
 * Exit status 0, or 1 with a reason on stderr for what the reference implementation refuses
 * (an unknown command, flag or test name). Results are printed as each finishes.
 */
export async function runExtension(io: ExtensionIo): Promise<number> {
  const [command, ...rest] = io.argv;
  try {
    switch (command) {
      case "info":
        io.stdout(JSON.stringify(extensionInfo(io.build), null, 2) + "\n");
        return 0;
      case "images":
        io.stdout(JSON.stringify(images(io.env), null, 2) + "\n");
        return 0;
      case "list":
        return list(io, rest);
      case "run-test":
        return await runTest(io, rest);
      case "probe-server":
        return await probeServer(io, rest);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        io.stdout(USAGE);
        return command === undefined ? 1 : 0;
      default:
        throw new ExtError(`unknown command "${command}"\n${USAGE}`, { code: "ext-usage" });
    }
  } catch (error) {
    if (error instanceof ExtError) {
      io.stderr(`error: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}

interface Parsed {
  values: Map<string, string[]>;
  positional: string[];
}

/** pflag's conventions: --flag=value, --flag value, -f value, -f=value; unknown flags are refused. */
function parseFlags(args: readonly string[], known: Record<string, string>): Parsed {
  const values = new Map<string, string[]>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const match = /^(--?)([A-Za-z][\w-]*)(?:=(.*))?$/s.exec(arg);
    if (!match || arg === "-") {
      positional.push(arg);
      continue;
    }
    const name = known[`${match[1]}${match[2]}`];
    if (!name) throw new ExtError(`unknown flag: ${match[1]}${match[2]}`, { code: "ext-usage" });
    let value = match[3];
    if (value === undefined) {
      value = args[++i];
      if (value === undefined) throw new ExtError(`flag needs an argument: ${arg}`, { code: "ext-usage" });
    }
    values.set(name, [...(values.get(name) ?? []), value]);
  }
  return { values, positional };
}

const lastOf = (parsed: Parsed, name: string) => parsed.values.get(name)?.at(-1);

function outputFormat(parsed: Parsed, allowed: readonly string[]): string {
  const format = lastOf(parsed, "output") ?? "json";
  if (!allowed.includes(format)) {
    throw new ExtError(`unsupported output format "${format}": say ${allowed.join(", ")}`, {
      code: "ext-usage",
    });
  }
  return format;
}

function specOf(test: NetworkTest): object {
  return {
    name: test.name,
    labels: Object.fromEntries(test.labels.map((l) => [l, {}])),
    resources: { isolation: {} },
    source: EXTENSION_SOURCE,
    lifecycle: "blocking",
    environmentSelector: {},
  };
}

function list(io: ExtensionIo, args: readonly string[]): number {
  const known: Record<string, string> = {
    "-o": "output",
    "--output": "output",
    "--suite": "suite",
    "--component": "component",
  };
  for (const flag of ENVIRONMENT_FLAGS) known[`--${flag}`] = flag;
  const parsed = parseFlags(args, known);
  const what = parsed.positional[0] ?? "tests";
  if (parsed.positional.length > 1 || !["tests", "suites"].includes(what)) {
    throw new ExtError(`list: say "list tests" or "list suites", not "list ${parsed.positional.join(" ")}"`, {
      code: "ext-usage",
    });
  }
  const format = outputFormat(parsed, ["json", "jsonl", "names"]);
  if (what === "suites") {
    const suites = (extensionInfo(io.build) as { suites: { name: string }[] }).suites;
    if (format === "names") io.stdout(suites.map((s) => s.name).join("\n") + "\n");
    else if (format === "jsonl") io.stdout(suites.map((s) => JSON.stringify(s) + "\n").join(""));
    else io.stdout(JSON.stringify(suites, null, 2) + "\n");
    return 0;
  }
  const suite = lastOf(parsed, "suite");
  let tests = networkTests();
  if (suite !== undefined) {
    tests = tests.filter((t) => t.suite === suite);
    if (tests.length === 0) throw new ExtError(`no such suite: ${suite}`, { code: "ext-usage" });
  }
  // Every test applies to every environment the flags can describe (their selectors are empty).
  const specs = tests.map(specOf);
  if (format === "names") io.stdout(tests.map((t) => t.name).join("\n") + "\n");
  else if (format === "jsonl") io.stdout(specs.map((s) => JSON.stringify(s) + "\n").join(""));
  else io.stdout(JSON.stringify(specs, null, 2) + "\n");
  return 0;
}

async function runTest(io: ExtensionIo, args: readonly string[]): Promise<number> {
  const parsed = parseFlags(args, {
    "-n": "names",
    "--names": "names",
    "-o": "output",
    "--output": "output",
    "--component": "component",
    "-c": "max-concurrency",
    "--max-concurrency": "max-concurrency",
  });
  const format = outputFormat(parsed, ["json", "jsonl"]);
  if (parsed.positional.length > 1)
    throw new ExtError("use --names to specify more than one test", { code: "ext-usage" });
  const names = [...(parsed.values.get("names") ?? []), ...parsed.positional];
  const piped = await io.readStdin();
  if (piped !== undefined) names.push(...piped.split("\n").filter((n) => n.trim() !== ""));
  if (names.length === 0) throw new ExtError("must specify at least one test", { code: "ext-usage" });
  const catalog = networkTests();
  const missing = names.filter((n) => !catalog.some((t) => t.name === n));
  if (missing.length > 0) throw new ExtError(`no such tests: ${missing.join(", ")}`, { code: "ext-usage" });
  const tests = names.map((n) => catalog.find((t) => t.name === n)!);
  const settings = readExtSettings(io.env);
  const results: OteResultLine[] = [];
  await runNetworkTests({
    tests,
    cluster: () => {
      const kubeconfig = io.env.KUBECONFIG;
      if (!kubeconfig) {
        throw new ExtError("KUBECONFIG is not set: point it at the cluster under test's kubeconfig", {
          code: "ext-cluster",
        });
      }
      return io.cluster(kubeconfig);
    },
    settings,
    env: io.env,
    signal: io.signal,
    log: (line) => io.stderr(`${new Date().toISOString()} ${line}\n`),
    emit: (result) => {
      if (format === "jsonl") io.stdout(JSON.stringify(result) + "\n");
      else results.push(result);
    },
  });
  if (format === "json") io.stdout(JSON.stringify(results, null, 2) + "\n");
  return 0;
}

async function probeServer(io: ExtensionIo, args: readonly string[]): Promise<number> {
  const parsed = parseFlags(args, {
    "--port": "port",
    "--name": "name",
    "--targets": "targets",
    "--interval-ms": "interval-ms",
    "--timeout-ms": "timeout-ms",
  });
  const number = (flag: string, fallback: number, min: number, max: number) => {
    const raw = lastOf(parsed, flag);
    const value = raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new ExtError(`--${flag} ${raw}: a whole number from ${min} to ${max}`, { code: "ext-usage" });
    }
    return value;
  };
  if (lastOf(parsed, "port") === undefined)
    throw new ExtError("probe-server needs --port N", { code: "ext-usage" });
  await runProbeServer({
    port: number("port", 0, 0, 65535),
    name: lastOf(parsed, "name") ?? io.env.POD_NAME ?? "probe",
    targetsJson: lastOf(parsed, "targets"),
    intervalMs: number("interval-ms", 1000, 50, 600_000),
    timeoutMs: number("timeout-ms", 2000, 50, 600_000),
    env: io.env,
    signal: io.signal,
    write: (line) => io.stdout(line + "\n"),
  });
  return 0;
}

/** The probe image, when one is named (by digest: its version is the digest). */
function images(env: NodeJS.ProcessEnv): object[] {
  const image = readExtSettings(env).image;
  if (image === undefined) return [];
  const [repository, digest] = image.split("@") as [string, string];
  const slash = repository.indexOf("/");
  const registry = slash > 0 ? repository.slice(0, slash) : "";
  return [{ index: 0, registry, name: repository.slice(slash + 1), version: digest }];
}
