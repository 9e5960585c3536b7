import { randomBytes } from "node:crypto";
import type { KubeObject, ObjectStore, StoreEvent } from "./object-store.ts";

interface DaemonSetSpec {
  selector?: { matchLabels?: Record<string, string> };
  updateStrategy?: { type?: string };
  template: {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec: { nodeSelector?: Record<string, string>; [key: string]: unknown };
  };
}

const GENERATION_LABEL = "pod-template-generation";
const isReady = (pod: KubeObject) =>
  ((pod.status?.conditions ?? []) as { type: string; status: string }[]).some(
    (c) => c.type === "Ready" && c.status === "True",
  );

/**
 * The DaemonSet controller: one pod per node its template's node selector matches, bound to that
 * node (`spec.nodeName`), a new one when a pod is deleted or fails, and — when the template
 * changes (RollingUpdate, the default; OnDelete waits for deletions) — the pods replaced one node
 * at a time, the next only once every pod is Ready again. `status` counts them as the real one does
 * (desired, current, ready, updated, available, observedGeneration).
 */
export class DaemonSetController {
  private readonly unsubscribe: () => void;
  private readonly dirty = new Set<string>();

  constructor(private readonly store: ObjectStore) {
    this.unsubscribe = store.subscribe((event) => this.react(event));
    for (const ds of store.list("daemonsets", undefined, () => true).items) this.mark(ds);
  }

  stop(): void {
    this.unsubscribe();
  }

  private react(event: StoreEvent): void {
    if (event.resource === "daemonsets") {
      if (event.type === "DELETED") {
        const uid = event.object.metadata.uid;
        setImmediate(() => {
          for (const pod of this.podsOf(event.object.metadata.namespace, uid)) this.deletePod(pod);
        });
      } else this.mark(event.object);
    } else if (event.resource === "pods") {
      const owner = event.object.metadata.ownerReferences?.find((o) => o.kind === "DaemonSet");
      const ds = owner && this.store.get("daemonsets", event.object.metadata.namespace, owner.name);
      if (ds) this.mark(ds);
    } else if (event.resource === "nodes") {
      for (const ds of this.store.list("daemonsets", undefined, () => true).items) this.mark(ds);
    }
  }

  private mark(ds: KubeObject): void {
    const key = `${ds.metadata.namespace}/${ds.metadata.name}`;
    if (this.dirty.has(key)) return;
    this.dirty.add(key);
    setImmediate(() => {
      this.dirty.delete(key);
      const current = this.store.get("daemonsets", ds.metadata.namespace, ds.metadata.name);
      if (current) this.sync(current);
    });
  }

  private podsOf(namespace: string, uid: string | undefined): KubeObject[] {
    return this.store
      .list("pods", namespace, () => true)
      .items.filter((p) => p.metadata.ownerReferences?.some((o) => o.kind === "DaemonSet" && o.uid === uid));
  }

  private deletePod(pod: KubeObject): void {
    try {
      this.store.delete("pods", pod.metadata.namespace, pod.metadata.name);
    } catch {
      // already gone
    }
  }

  private sync(ds: KubeObject): void {
    const spec = ds.spec as unknown as DaemonSetSpec;
    const generation = String(ds.metadata.generation ?? 1);
    const selector = spec.template.spec.nodeSelector ?? {};
    const nodes = this.store
      .list("nodes", "", (labels) => Object.entries(selector).every(([k, v]) => labels[k] === v))
      .items.map((n) => n.metadata.name)
      .sort();
    const pods = this.podsOf(ds.metadata.namespace, ds.metadata.uid);
    for (const pod of pods) {
      const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName ?? "";
      if (pod.status?.phase === "Failed" || !nodes.includes(nodeName)) this.deletePod(pod);
    }
    const alive = this.podsOf(ds.metadata.namespace, ds.metadata.uid);
    const onNode = new Map(alive.map((p) => [(p.spec as { nodeName?: string }).nodeName ?? "", p]));
    for (const node of nodes) if (!onNode.has(node)) this.createPod(ds, node, generation);
    const outdated = alive.filter((p) => p.metadata.labels?.[GENERATION_LABEL] !== generation);
    const settled = nodes.every((n) => onNode.has(n)) && alive.every(isReady);
    if (spec.updateStrategy?.type !== "OnDelete" && settled && outdated.length > 0) {
      const next = outdated.sort((a, b) =>
        String(a.spec?.nodeName).localeCompare(String(b.spec?.nodeName)),
      )[0]!;
      this.deletePod(next);
    }
    const status = {
      desiredNumberScheduled: nodes.length,
      currentNumberScheduled: onNode.size,
      numberReady: alive.filter(isReady).length,
      updatedNumberScheduled: alive.length - outdated.length,
      numberAvailable: alive.filter(isReady).length,
      numberUnavailable: nodes.length - alive.filter(isReady).length,
      numberMisscheduled: 0,
      observedGeneration: ds.metadata.generation ?? 1,
    };
    if (JSON.stringify(status) !== JSON.stringify(ds.status)) {
      this.store.update("daemonsets", ds.metadata.namespace, ds.metadata.name, (o) => {
        o.status = status;
      });
    }
  }

  private createPod(ds: KubeObject, nodeName: string, generation: string): void {
    const spec = ds.spec as unknown as DaemonSetSpec;
    const template = structuredClone(spec.template);
    this.store.create("pods", {
      metadata: {
        name: `${ds.metadata.name}-${randomBytes(4).toString("hex").slice(0, 5)}`,
        namespace: ds.metadata.namespace,
        labels: { ...template.metadata?.labels, [GENERATION_LABEL]: generation },
        ...(template.metadata?.annotations ? { annotations: template.metadata.annotations } : {}),
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "DaemonSet",
            name: ds.metadata.name,
            uid: ds.metadata.uid ?? "",
            controller: true,
          },
        ],
      },
      spec: { ...template.spec, nodeName },
      status: { phase: "Pending" },
    });
  }
}
