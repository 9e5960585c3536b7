import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseAllDocuments } from "yaml";

/** A Kubernetes object as YAML holds it. */
export type Manifest = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
};

function parseManifests(yaml: string): Manifest[] {
  return parseAllDocuments(yaml)
    .map((document) => document.toJS() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest !== null);
}

/** Every document of a YAML file. */
export function readManifests(path: string): Manifest[] {
  return parseManifests(readFileSync(path, "utf8"));
}

/**
 * A kustomization as the cluster would get it: rendered by `kubectl kustomize` (kubectl is installed by
 * scripts/install-system-deps.sh), so the tests check what `kubectl apply -k` applies.
 */
export function renderKustomization(dir: string): Manifest[] {
  return parseManifests(execFileSync("kubectl", ["kustomize", dir], { encoding: "utf8" }));
}

/** Where a kustomization's files are, for messages. */
export const deployDir = resolve(dirname(new URL(import.meta.url).pathname), "../../deploy");
