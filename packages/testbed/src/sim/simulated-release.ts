/** One component build a release carries: its image pullspec and the commit it was built from. */
export interface ComponentBuild {
  image: string;
  /** `io.openshift.build.commit.id` of the image (image-references carries it as an annotation). */
  commit?: string;
  /** `io.openshift.build.source-location`. */
  sourceLocation?: string;
}

/** What a simulated cluster installs or upgrades to: a release's version and its component builds by tag. */
export interface SimulatedRelease {
  version: string;
  components: Record<string, ComponentBuild>;
}

/** Resolves a release image pullspec into what it carries (the caller reads payloads; the simulator does not). */
export type ResolveRelease = (payload: string) => SimulatedRelease | Promise<SimulatedRelease>;
