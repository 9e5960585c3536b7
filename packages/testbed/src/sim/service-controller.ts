import { ipv4Cidr, type Ipv4Cidr } from "./ipv4-cidr.ts";
import type { KubeObject, ObjectStore, StoreEvent } from "./object-store.ts";
import { StoreError } from "./store-error.ts";

interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
  protocol?: string;
}

interface ServiceSpec {
  type?: string;
  clusterIP?: string;
  clusterIPs?: string[];
  selector?: Record<string, string>;
  ports?: ServicePort[];
}

interface PodLike {
  spec?: { nodeName?: string; containers?: { ports?: { name?: string; containerPort: number }[] }[] };
  status?: { podIP?: string; phase?: string; conditions?: { type: string; status: string }[] };
}

const SERVICE_NAME_LABEL = "kubernetes.io/service-name";
const MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by";
const MANAGED_BY = "endpointslice-controller.k8s.io";

/**
 * What the API server and the endpoint-slice controller do for Services: a new Service gets a
 * ClusterIP from the Service CIDR (or keeps the free one it asks for; `None` is headless), its
 * ports TCP and their targetPort by default; a Service with a selector has one EndpointSlice
 * (`kubernetes.io/service-name`) listing the matching pods that have an address, `ready` when
 * their Ready condition is True, kept up to date as pods come, change and go.
 */
export class ServiceController {
  private readonly cidr: Ipv4Cidr;
  private readonly unsubscribe: () => void;
  private readonly dirty = new Set<string>();

  constructor(
    private readonly store: ObjectStore,
    options: { serviceCIDR: string },
  ) {
    this.cidr = ipv4Cidr(options.serviceCIDR);
    this.unsubscribe = store.subscribe((event) => this.react(event));
  }

  stop(): void {
    this.unsubscribe();
  }

  admit(resource: string, object: KubeObject): void {
    if (resource !== "services") return;
    const spec = (object.spec ?? {}) as ServiceSpec;
    const ports = (spec.ports ?? []).map((p, index) => {
      if (!Number.isInteger(p.port) || p.port < 1 || p.port > 65535) {
        throw new StoreError(
          `Service "${object.metadata.name}" is invalid: spec.ports[${index}].port must be 1 to 65535, not ${JSON.stringify(p.port)}`,
          { code: "Invalid" },
        );
      }
      return { ...p, protocol: p.protocol ?? "TCP", targetPort: p.targetPort ?? p.port };
    });
    const clusterIP =
      spec.clusterIP === "None" ? "None" : this.allocate(object.metadata.name, spec.clusterIP);
    object.spec = {
      ...spec,
      type: spec.type ?? "ClusterIP",
      clusterIP,
      clusterIPs: [clusterIP],
      ipFamilies: ["IPv4"],
      ipFamilyPolicy: "SingleStack",
      sessionAffinity: "None",
      ports,
    };
  }

  private allocate(name: string, wanted: string | undefined): string {
    const used = new Set(
      this.store
        .list("services", undefined, () => true)
        .items.map((s) => (s.spec as ServiceSpec | undefined)?.clusterIP),
    );
    if (wanted) {
      if (!this.cidr.contains(wanted) || used.has(wanted)) {
        throw new StoreError(
          `Service "${name}" is invalid: spec.clusterIP: ${wanted} is ${used.has(wanted) ? "already allocated" : `not in the Service CIDR ${this.cidr.text}`}`,
          { code: "Invalid" },
        );
      }
      return wanted;
    }
    for (let offset = 1; offset < this.cidr.size - 1; offset += 1) {
      const address = this.cidr.at(offset);
      if (!used.has(address)) return address;
    }
    throw new StoreError(`Service "${name}" is invalid: the Service CIDR ${this.cidr.text} is full`, {
      code: "Invalid",
    });
  }

  private react(event: StoreEvent): void {
    if (event.resource !== "services" && event.resource !== "pods") return;
    const namespace = event.object.metadata.namespace;
    if (event.resource === "services" && event.type === "DELETED") {
      const name = event.object.metadata.name;
      setImmediate(() => {
        for (const slice of this.slicesOf(namespace, name)) {
          this.store.delete("endpointslices", namespace, slice.metadata.name);
        }
      });
      return;
    }
    if (this.dirty.has(namespace)) return;
    this.dirty.add(namespace);
    // After the change is delivered, so that every watch sees the pod before its endpoint.
    setImmediate(() => {
      this.dirty.delete(namespace);
      for (const service of this.store.list("services", namespace, () => true).items) this.sync(service);
    });
  }

  private slicesOf(namespace: string, service: string): KubeObject[] {
    return this.store.list("endpointslices", namespace, (l) => l[SERVICE_NAME_LABEL] === service).items;
  }

  private sync(service: KubeObject): void {
    const spec = (service.spec ?? {}) as ServiceSpec;
    const selector = spec.selector;
    if (!selector || Object.keys(selector).length === 0) return;
    const { namespace, name } = service.metadata;
    const pods = this.store
      .list("pods", namespace, (labels) => Object.entries(selector).every(([k, v]) => labels[k] === v))
      .items.map((p) => ({ object: p, pod: p as PodLike }))
      .filter(({ pod }) => pod.status?.podIP && !["Succeeded", "Failed"].includes(pod.status.phase ?? ""))
      .sort((a, b) => a.object.metadata.name.localeCompare(b.object.metadata.name));
    const named = (port: string) =>
      pods
        .flatMap(({ pod }) => pod.spec?.containers ?? [])
        .flatMap((c) => c.ports ?? [])
        .find((p) => p.name === port)?.containerPort;
    const ports = (spec.ports ?? []).flatMap((p) => {
      const port = typeof p.targetPort === "string" ? named(p.targetPort) : (p.targetPort ?? p.port);
      return port === undefined ? [] : [{ name: p.name ?? "", port, protocol: p.protocol ?? "TCP" }];
    });
    const endpoints = pods.map(({ object, pod }) => {
      const ready = pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
      return {
        addresses: [pod.status!.podIP!],
        conditions: { ready, serving: ready, terminating: false },
        ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
        targetRef: { kind: "Pod", namespace, name: object.metadata.name, uid: object.metadata.uid },
      };
    });
    const [existing] = this.slicesOf(namespace, name);
    if (existing) {
      if (JSON.stringify([existing.endpoints, existing.ports]) === JSON.stringify([endpoints, ports])) return;
      this.store.update("endpointslices", namespace, existing.metadata.name, (o) => {
        o.endpoints = endpoints;
        o.ports = ports;
      });
      return;
    }
    this.store.create("endpointslices", {
      metadata: {
        name: `${name}-${(service.metadata.uid ?? "00000").slice(0, 5)}`,
        namespace,
        labels: { [SERVICE_NAME_LABEL]: name, [MANAGED_BY_LABEL]: MANAGED_BY },
        ownerReferences: [
          { apiVersion: "v1", kind: "Service", name, uid: service.metadata.uid ?? "", controller: true },
        ],
      },
      addressType: "IPv4",
      endpoints,
      ports,
    });
  }
}
