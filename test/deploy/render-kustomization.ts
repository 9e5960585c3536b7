import { readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";

/** A Kubernetes object as YAML holds it. */
export type Manifest = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
};

/** Kinds that have no namespace (kustomize's namespace transformer leaves them alone). */
const CLUSTER_SCOPED = new Set([
  "Namespace",
  "ClusterRole",
  "ClusterRoleBinding",
  "CustomResourceDefinition",
  "PersistentVolume",
  "StorageClass",
]);

/** Every document of a YAML file. */
export function readManifests(path: string): Manifest[] {
  return parseAllDocuments(readFileSync(path, "utf8"))
    .map((document) => document.toJS() as Manifest | null)
    .filter((manifest): manifest is Manifest => manifest !== null);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Strategic merge as kustomize applies it to the fields these manifests patch: maps merge key by
 * key, lists of named items (containers, env, volumes …) merge item by item on `name`, other
 * lists and scalars are replaced.
 */
export function strategicMerge(target: unknown, patch: unknown): unknown {
  if (isObject(target) && isObject(patch)) {
    const merged: Record<string, unknown> = { ...target };
    for (const [key, value] of Object.entries(patch))
      merged[key] = key in target ? strategicMerge(target[key], value) : value;
    return merged;
  }
  if (
    Array.isArray(target) &&
    Array.isArray(patch) &&
    patch.every((item) => isObject(item) && typeof item.name === "string")
  ) {
    const merged = [...target];
    for (const item of patch as Record<string, unknown>[]) {
      const index = merged.findIndex((existing) => isObject(existing) && existing.name === item.name);
      if (index >= 0) merged[index] = strategicMerge(merged[index], item);
      else merged.push(item);
    }
    return merged;
  }
  return patch;
}

interface Kustomization {
  namespace?: string;
  resources?: string[];
  labels?: { pairs: Record<string, string> }[];
  images?: { name: string; newName?: string; newTag?: string }[];
  patches?: { path: string }[];
}

function podSpecs(manifest: Manifest): Record<string, unknown>[] {
  const spec = manifest.spec as Record<string, unknown> | undefined;
  const template = spec?.template as { spec?: Record<string, unknown> } | undefined;
  return template?.spec ? [template.spec] : [];
}

/**
 * Renders a kustomization the way `kubectl kustomize` does for the features these manifests use —
 * resources (files and directories), labels (metadata only), namespace, images and strategic-merge
 * patches — so the tests need no kustomize binary. Anything else in a kustomization is refused,
 * so a manifest change that needs more fails here instead of being rendered wrongly.
 */
export function renderKustomization(dir: string): Manifest[] {
  const path = join(dir, "kustomization.yaml");
  const kustomization = readManifests(path)[0] as unknown as Kustomization & Record<string, unknown>;
  const unsupported = Object.keys(kustomization).filter(
    (key) => !["apiVersion", "kind", "namespace", "resources", "labels", "images", "patches"].includes(key),
  );
  if (unsupported.length > 0)
    throw new Error(`${path}: this renderer does not support ${unsupported.join(", ")}`);
  let manifests: Manifest[] = [];
  for (const resource of kustomization.resources ?? []) {
    const target = resolve(dir, resource);
    manifests.push(...(statSync(target).isDirectory() ? renderKustomization(target) : readManifests(target)));
  }
  for (const { path: patchPath } of kustomization.patches ?? []) {
    for (const patch of readManifests(join(dir, patchPath))) {
      const index = manifests.findIndex(
        (m) => m.kind === patch.kind && m.metadata.name === patch.metadata.name,
      );
      if (index < 0) throw new Error(`${patchPath}: no ${patch.kind} ${patch.metadata.name} to patch`);
      manifests[index] = strategicMerge(manifests[index], patch) as Manifest;
    }
  }
  manifests = manifests.map((manifest) => structuredClone(manifest));
  for (const manifest of manifests) {
    if (kustomization.namespace && !CLUSTER_SCOPED.has(manifest.kind))
      manifest.metadata.namespace = kustomization.namespace;
    for (const { pairs } of kustomization.labels ?? [])
      manifest.metadata.labels = { ...manifest.metadata.labels, ...pairs };
    for (const podSpec of podSpecs(manifest)) {
      for (const container of [
        ...((podSpec.containers as { image: string }[]) ?? []),
        ...((podSpec.initContainers as { image: string }[]) ?? []),
      ]) {
        const name = container.image.replace(/[@:].*$/, "");
        const image = kustomization.images?.find((i) => i.name === name);
        if (image) container.image = `${image.newName ?? name}:${image.newTag ?? "latest"}`;
      }
    }
  }
  return manifests;
}

/** Where a kustomization's files are, for messages. */
export const deployDir = resolve(dirname(new URL(import.meta.url).pathname), "../../deploy");
