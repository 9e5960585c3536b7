import { randomUUID } from "node:crypto";
import { StoreError } from "./store-error.ts";

/** A Kubernetes object as stored: plain JSON with the metadata the store maintains. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
    generateName?: string;
    [key: string]: unknown;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  data?: Record<string, string>;
  [key: string]: unknown;
}

/** A resource's plural name (`jobs`, `clusterdeployments`): unique across the groups served. */
export type Resource = string;
export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED";

export interface StoreEvent {
  resource: Resource;
  type: WatchEventType;
  object: KubeObject;
  resourceVersion: number;
}

/**
 * The API server's storage: objects per resource, one resourceVersion counter (like etcd's
 * revision), and a bounded history of changes so that a watch can resume from a resourceVersion
 * — or be told 410 Gone when that version has been compacted away. Stored objects are never
 * changed in place (an update stores a changed copy), so readers get them without copying and
 * must treat them as read-only; that keeps a thousand-pod benchmark cheap.
 */
export class ObjectStore {
  private readonly objects = new Map<Resource, Map<string, KubeObject>>();
  private history: StoreEvent[] = [];
  private revision = 1;
  /** The oldest resourceVersion a watch may resume from. */
  private compactedThrough = 0;
  private readonly listeners = new Set<(event: StoreEvent) => void>();

  constructor(private readonly historyLimit = 20_000) {}

  get resourceVersion(): number {
    return this.revision;
  }

  private bucket(resource: Resource): Map<string, KubeObject> {
    let bucket = this.objects.get(resource);
    if (!bucket) this.objects.set(resource, (bucket = new Map()));
    return bucket;
  }

  get(resource: Resource, namespace: string, name: string): KubeObject | undefined {
    return this.bucket(resource).get(`${namespace}/${name}`);
  }

  list(
    resource: Resource,
    namespace: string | undefined,
    selector: (labels: Record<string, string>) => boolean,
  ) {
    const items = [...this.bucket(resource).values()].filter(
      (o) =>
        (namespace === undefined || o.metadata.namespace === namespace) && selector(o.metadata.labels ?? {}),
    );
    return { items, resourceVersion: this.revision };
  }

  create(resource: Resource, object: KubeObject): KubeObject {
    const bucket = this.bucket(resource);
    const key = `${object.metadata.namespace}/${object.metadata.name}`;
    if (bucket.has(key))
      throw new StoreError(`${resource} "${object.metadata.name}" already exists`, { code: "AlreadyExists" });
    const stored: KubeObject = structuredClone(object);
    stored.metadata.uid = randomUUID();
    stored.metadata.creationTimestamp = new Date().toISOString();
    stored.metadata.generation = 1;
    this.commit(resource, "ADDED", stored);
    bucket.set(key, stored);
    return stored;
  }

  /** Applies a change to the current object; undefined when it is gone. */
  update(
    resource: Resource,
    namespace: string,
    name: string,
    change: (object: KubeObject) => void,
  ): KubeObject | undefined {
    const bucket = this.bucket(resource);
    const current = bucket.get(`${namespace}/${name}`);
    if (!current) return undefined;
    const next = structuredClone(current);
    change(next);
    // The last finalizer of an object being deleted removed: the object goes, as on a real server.
    if (next.metadata.deletionTimestamp && !next.metadata.finalizers?.length) {
      return this.remove(resource, next);
    }
    this.commit(resource, "MODIFIED", next);
    bucket.set(`${namespace}/${name}`, next);
    return next;
  }

  /**
   * Deletes the object — or, while it has finalizers, only marks it (deletionTimestamp) and keeps
   * it until their controllers remove them, as the real API server does.
   */
  delete(resource: Resource, namespace: string, name: string): KubeObject {
    const current = this.bucket(resource).get(`${namespace}/${name}`);
    if (!current) throw new StoreError(`${resource} "${name}" not found`, { code: "NotFound" });
    if (current.metadata.finalizers?.length) {
      if (current.metadata.deletionTimestamp) return current;
      return this.update(resource, namespace, name, (o) => {
        o.metadata.deletionTimestamp = new Date().toISOString();
      })!;
    }
    return this.remove(resource, current);
  }

  private remove(resource: Resource, current: KubeObject): KubeObject {
    const { namespace, name } = current.metadata;
    this.bucket(resource).delete(`${namespace}/${name}`);
    // The deleted object carries the deletion's resourceVersion, as the real server's does.
    const gone = { ...current, metadata: { ...current.metadata } };
    this.commit(resource, "DELETED", gone);
    return gone;
  }

  /** Changes after `resourceVersion`, or an Expired StoreError when they are no longer all known. */
  since(resourceVersion: number): StoreEvent[] {
    if (resourceVersion < this.compactedThrough) {
      throw new StoreError(`too old resource version: ${resourceVersion} (${this.compactedThrough})`, {
        code: "Expired",
      });
    }
    return this.history.filter((e) => e.resourceVersion > resourceVersion);
  }

  /** Forgets the whole history, as etcd compaction does: every resuming watch gets 410 Gone. */
  compact(): void {
    this.history = [];
    this.compactedThrough = this.revision;
  }

  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private commit(resource: Resource, type: WatchEventType, object: KubeObject): void {
    this.revision += 1;
    object.metadata.resourceVersion = String(this.revision);
    const event: StoreEvent = {
      resource,
      type,
      object,
      resourceVersion: this.revision,
    };
    this.history.push(event);
    if (this.history.length > this.historyLimit) {
      const dropped = this.history.splice(0, this.history.length - this.historyLimit);
      this.compactedThrough = dropped.at(-1)!.resourceVersion;
    }
    for (const listener of this.listeners) listener(event);
  }
}
