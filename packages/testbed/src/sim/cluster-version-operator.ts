import type { KubeObject, ObjectStore, StoreEvent } from "./object-store.ts";
import type { ResolveRelease, SimulatedRelease } from "./simulated-release.ts";

interface Condition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}
interface HistoryEntry {
  state: "Completed" | "Partial";
  startedTime: string;
  completionTime: string | null;
  version: string;
  image: string;
  verified: boolean;
}
interface ClusterVersionStatus {
  desired: { version: string; image: string };
  history: HistoryEntry[];
  conditions: Condition[];
  [key: string]: unknown;
}

function setCondition(conditions: Condition[], next: Condition): Condition[] {
  const now = new Date().toISOString();
  const current = conditions.find((c) => c.type === next.type);
  const lastTransitionTime = current && current.status === next.status ? current.lastTransitionTime : now;
  return [...conditions.filter((c) => c.type !== next.type), { ...next, lastTransitionTime }];
}

/**
 * The part of the cluster-version operator a cluster source sees: `spec.desiredUpdate` {image,
 * force} starts an upgrade — an unsigned payload (every simulated one) without `force` is refused
 * with ReleaseAccepted=False — which at once sets `status.desired` to the target, adds a Partial
 * history entry and Progressing=True, and after `upgradeMs` completes it: the entry Completed,
 * Progressing=False, Available=True, and the component workloads on the new release's images.
 */
export class ClusterVersionOperator {
  private readonly unsubscribe: () => void;
  private timer: NodeJS.Timeout | undefined;
  /** The image being rolled out, so that a repeated event does not start it twice. */
  private target: string | undefined;
  /** The request last refused, so that the refusal's own status change does not start it again. */
  private refused: string | undefined;

  constructor(
    private readonly store: ObjectStore,
    private readonly options: {
      upgradeMs: number;
      resolveRelease: ResolveRelease;
      /** Puts the release's component builds on the cluster's workloads (done when it resolves). */
      roll: (release: SimulatedRelease) => void | Promise<void>;
    },
  ) {
    this.unsubscribe = store.subscribe((event) => setImmediate(() => this.react(event)));
  }

  stop(): void {
    this.unsubscribe();
    clearTimeout(this.timer);
  }

  private react(event: StoreEvent): void {
    if (event.resource !== "clusterversions" || event.type === "DELETED") return;
    const desiredUpdate = (event.object.spec?.desiredUpdate ?? undefined) as
      { image?: string; version?: string; force?: boolean } | undefined;
    const status = event.object.status as unknown as ClusterVersionStatus;
    const image = desiredUpdate?.image;
    if (!image || image === this.target || (image === status.desired.image && this.target === undefined))
      return;
    // A request refused once (unforced, or a payload that cannot be loaded) stays refused until it changes.
    const request = `${desiredUpdate.force ? "force" : "verify"} ${image}`;
    if (this.refused === request) return;
    if (!desiredUpdate.force) {
      this.refused = request;
      this.update((s) => {
        s.conditions = setCondition(s.conditions, {
          type: "ReleaseAccepted",
          status: "False",
          reason: "RetrievePayload",
          message: `Retrieving payload failed version="${desiredUpdate.version ?? ""}" image="${image}" failure=The update cannot be verified: unable to verify sha256 signature: no signature found (set force: true for an unsigned payload)`,
        });
      });
      return;
    }
    this.refused = undefined;
    this.target = image;
    clearTimeout(this.timer);
    // A resolver that throws at once fails the load like one that rejects.
    Promise.resolve()
      .then(() => this.options.resolveRelease(image))
      .then((release) => this.start(image, release))
      .catch((error: unknown) => {
        // The operator cannot load the payload: it says so and keeps running what it runs.
        this.target = undefined;
        this.refused = request;
        this.update((s) => {
          s.conditions = setCondition(s.conditions, {
            type: "ReleaseAccepted",
            status: "False",
            reason: "RetrievePayload",
            message: `Retrieving payload failed image="${image}" failure=${error instanceof Error ? error.message : String(error)}`,
          });
        });
      });
  }

  private start(image: string, release: SimulatedRelease): void {
    if (this.target !== image) return;
    const now = new Date().toISOString();
    this.update((s) => {
      s.desired = { version: release.version, image };
      s.history = [
        {
          state: "Partial",
          startedTime: now,
          completionTime: null,
          version: release.version,
          image,
          verified: false,
        },
        ...s.history.map((h) => (h.state === "Partial" ? { ...h, completionTime: now } : h)),
      ];
      s.conditions = setCondition(s.conditions, {
        type: "ReleaseAccepted",
        status: "True",
        reason: "PayloadLoaded",
        message: `Payload loaded version="${release.version}" image="${image}"`,
      });
      s.conditions = setCondition(s.conditions, {
        type: "Progressing",
        status: "True",
        message: `Working towards ${release.version}: 0 of 900 done (0% complete)`,
      });
    });
    this.timer = setTimeout(() => this.complete(image, release), this.options.upgradeMs);
  }

  private complete(image: string, release: SimulatedRelease): void {
    if (this.target !== image) return;
    const rolled = this.options.roll(release);
    if (rolled) {
      rolled.then(
        () => this.finish(image, release),
        () => undefined,
      );
    } else this.finish(image, release);
  }

  private finish(image: string, release: SimulatedRelease): void {
    if (this.target !== image) return;
    const now = new Date().toISOString();
    this.update((s) => {
      s.history = s.history.map((h, i) =>
        i === 0 && h.image === image ? { ...h, state: "Completed", completionTime: now } : h,
      );
      s.conditions = setCondition(s.conditions, {
        type: "Available",
        status: "True",
        message: `Done applying ${release.version}`,
      });
      s.conditions = setCondition(s.conditions, { type: "Failing", status: "False" });
      s.conditions = setCondition(s.conditions, {
        type: "Progressing",
        status: "False",
        message: `Cluster version is ${release.version}`,
      });
    });
    this.target = undefined;
  }

  private update(change: (status: ClusterVersionStatus) => void): void {
    this.store.update("clusterversions", "", "version", (o: KubeObject) => {
      const status = o.status as unknown as ClusterVersionStatus;
      change(status);
      o.status = { ...status, observedGeneration: o.metadata.generation };
    });
  }
}
