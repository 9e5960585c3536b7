import { Option, type Command } from "commander";

interface AssembleFlags {
  fromRelease: string;
  to: string;
  tag?: string;
  output: "text" | "json";
  cacheDir?: string;
}

/**
 * `netstress payload assemble`: a PR payload from a base release and the PR's images, pushed by
 * digest, as `oc adm release new --from-release BASE TAG=IMAGE…` makes one.
 */
export function registerPayloadCommand(program: Command): void {
  const payload = program.command("payload").description("Release payloads: assemble a PR payload");
  payload
    .command("assemble")
    .description(
      "Push a PR payload: the base release's layers plus one layer pointing TAG at IMAGE in image-references and every release manifest naming the replaced image (one image per arch, an index when the base is one); prints the payload by digest",
    )
    .argument("<TAG=IMAGE...>", "the PR's image for a payload tag (repeatable)")
    .requiredOption("--from-release <REF>", "the base release payload (a registry reference)")
    .requiredOption("--to <REPOSITORY>", "repository to push to, e.g. quay.io/org/pr-payloads (no tag)")
    .option("--tag <TAG>", "also tag the payload (it is always pushed by digest)")
    .option("--cache-dir <DIR>", "content-addressed image cache (default: $XDG_CACHE_HOME/netstress)")
    .addOption(new Option("-o, --output <FORMAT>", "output format").choices(["text", "json"]).default("text"))
    .action(async (mappings: string[], flags: AssembleFlags) => {
      const [{ parseOverrideFlags }, { assemblePrPayload }, { createRegistry }, distribution, credentials] =
        await Promise.all([
          import("../../payload/overrides.ts"),
          import("../../payload/assemble-pr-payload.ts"),
          import("../../registry/create-registry.ts"),
          import("../../registry/distribution-client.ts"),
          import("../../registry/registry-credentials.ts"),
        ]);
      const overrides = parseOverrideFlags(mappings, "TAG=IMAGE");
      const client = distribution.createDistributionClient({
        credentials: await credentials.loadCredentials(),
      });
      const registry = await createRegistry({
        client,
        ...(flags.cacheDir ? { cacheDir: flags.cacheDir } : {}),
      });
      const assembled = await assemblePrPayload({
        base: flags.fromRelease,
        overrides,
        targetRepository: flags.to,
        registry,
        client,
        ...(flags.tag ? { tag: flags.tag } : {}),
      });
      process.stdout.write(
        flags.output === "json"
          ? `${JSON.stringify(assembled, null, 2)}\n`
          : [
              assembled.pullspec,
              ...Object.entries(assembled.perArch).map(([arch, digest]) => `  ${arch}: ${digest}`),
              ...Object.entries(assembled.images).map(([tag, image]) => `  ${tag} → ${image}`),
              "",
            ].join("\n"),
      );
    });
}
