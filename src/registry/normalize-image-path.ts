import { RegistryError } from "./registry-error.ts";

/** `./usr/bin/x`, `/usr/bin/x` and `usr//bin/x` all name `usr/bin/x`; `..` is refused outright. */
export function normalizeImagePath(name: string, what: string): string {
  const parts = name.split("/").filter((p) => p !== "" && p !== ".");
  if (parts.includes("..")) {
    throw new RegistryError(
      "unsafe-path",
      `${what}: entry "${name}" escapes the image root with "..": refusing the layer`,
    );
  }
  return parts.join("/");
}
