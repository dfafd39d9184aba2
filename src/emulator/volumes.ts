/**
 * The emulator's block volumes: the assumed lifecycle (docs/service-assumptions.md §11b)
 * and its refusals. A create answers at once with the volume `creating`; attach, detach
 * and delete pass through `attaching`, `detaching` and `deleting` for the behaviour's
 * `volumeTransitionMs` (0: at once) before they show their result. A second attach, the
 * detach of a volume that is not attached (or attached to another instance than the one
 * named) and the delete of an attached volume are refused with 409, as is any change
 * while a transition runs. Transitions finish lazily in {@link VolumeStore.advance}.
 */
import type { CreateVolumeRequest } from "../service/kinds/blockvolume.js";
import { toServiceTimestamp } from "../service/schemas/primitives.js";

/** A block volume of the emulator. */
export interface VolumeRecord {
  id: string;
  name: string;
  description: string;
  sizeGB: number;
  volumeType: string;
  /** One of the assumed states (VOLUME_STATES), or what the admin API set. */
  status: string;
  /** The instance it is attached to (also while `attaching` and `detaching`). */
  instanceId?: string;
  createdAt: number;
  updatedAt: number;
  /** List operations show the volume from this time on. */
  visibleAt: number;
}

/** A refused volume operation: the envelope status and the message. */
export class VolumeRefusal extends Error {
  constructor(
    readonly status: 400 | 404 | 409,
    message: string,
  ) {
    super(message);
    this.name = "VolumeRefusal";
  }
}

/** What the store reads of the emulator: its clock and timings. */
export interface VolumeClock {
  now(): number;
  /** How long attaching, detaching, creating and deleting last. */
  transitionMs(): number;
  /** How long after a create the volume is missing from the list. */
  listVisibilityDelayMs(): number;
}

/** The state each transitional state settles into (`null`: the volume is gone). */
const SETTLES_INTO: Record<string, string | null> = {
  creating: "available",
  attaching: "in-use",
  detaching: "available",
  deleting: null,
};

/** The volumes of the emulator and their lifecycle. */
export class VolumeStore {
  readonly records = new Map<string, VolumeRecord>();
  /** Volumes in a transitional state, with the time it ends. */
  private readonly settling = new Map<string, number>();

  constructor(private readonly clock: VolumeClock) {}

  /** Forgets every volume. */
  clear(): void {
    this.records.clear();
    this.settling.clear();
  }

  /** Finishes every transition whose time has come. */
  advance(now = this.clock.now()): void {
    for (const [id, at] of this.settling) {
      if (now < at) continue;
      this.settling.delete(id);
      const v = this.records.get(id);
      if (!v) continue;
      const next = SETTLES_INTO[v.status];
      if (next === null) {
        this.records.delete(id);
        continue;
      }
      if (next === undefined) continue;
      v.status = next;
      if (next === "available") delete v.instanceId;
      v.updatedAt = now;
    }
  }

  /** The volume `id`; a 404 refusal when there is none. */
  get(id: string): VolumeRecord {
    const v = this.records.get(id);
    if (!v) throw new VolumeRefusal(404, `volume ${id} not found`);
    return v;
  }

  /** Creates a volume (`creating`, then `available`). */
  create(id: string, req: CreateVolumeRequest): VolumeRecord {
    const now = this.clock.now();
    const v: VolumeRecord = {
      id,
      name: req.name,
      description: req.description ?? "",
      sizeGB: req.sizeGB,
      volumeType: req.volumeType,
      status: "creating",
      createdAt: now,
      updatedAt: now,
      visibleAt: now + this.clock.listVisibilityDelayMs(),
    };
    this.records.set(id, v);
    this.transition(v, "creating");
    return v;
  }

  /** Attaches `id` to `instanceId`; only an `available` volume can be attached. */
  attach(id: string, instanceId: string): VolumeRecord {
    const v = this.get(id);
    if (v.status === "in-use" || v.status === "attaching") {
      throw new VolumeRefusal(409, `volume ${id} is already attached to ${v.instanceId}`);
    }
    if (v.status !== "available") {
      throw new VolumeRefusal(
        409,
        `volume ${id} is ${v.status}; only an available volume can be attached`,
      );
    }
    v.instanceId = instanceId;
    this.transition(v, "attaching");
    return v;
  }

  /** Detaches `id`; only an `in-use` volume, and from the instance named if one is. */
  detach(id: string, instanceId: string | undefined): VolumeRecord {
    const v = this.get(id);
    if (v.status !== "in-use") {
      throw new VolumeRefusal(
        409,
        `volume ${id} is ${v.status === "available" ? "not attached" : v.status}; only an attached (in-use) volume can be detached`,
      );
    }
    if (instanceId !== undefined && instanceId !== v.instanceId) {
      throw new VolumeRefusal(
        409,
        `volume ${id} is attached to ${v.instanceId}, not to ${instanceId}`,
      );
    }
    this.transition(v, "detaching");
    return v;
  }

  /** Deletes `id`; an attached volume (or one being attached or detached) is refused. */
  delete(id: string): void {
    const v = this.get(id);
    if (v.status === "deleting") return;
    if (v.status === "in-use" || v.status === "attaching" || v.status === "detaching") {
      throw new VolumeRefusal(
        409,
        `volume ${id} is ${v.status} (attached to ${v.instanceId}); detach it first`,
      );
    }
    this.transition(v, "deleting");
  }

  /**
   * Sets the remote state of `id` as the service would on its own, or someone else
   * through it (admin API): `instanceId` null detaches; a transition running ends.
   */
  patch(id: string, change: { status?: string; instanceId?: string | null }): VolumeRecord {
    const v = this.get(id);
    this.settling.delete(id);
    if (change.status !== undefined) v.status = change.status;
    if (change.instanceId === null) delete v.instanceId;
    else if (change.instanceId !== undefined) v.instanceId = change.instanceId;
    v.updatedAt = this.clock.now();
    return v;
  }

  /** Whether the list shows `v` now. */
  isListed(v: VolumeRecord): boolean {
    return this.clock.now() >= v.visibleAt;
  }

  /** Puts `v` in transitional `status`, settled at once without a transition time. */
  private transition(v: VolumeRecord, status: string): void {
    const now = this.clock.now();
    v.status = status;
    v.updatedAt = now;
    this.settling.set(v.id, now + this.clock.transitionMs());
    if (this.clock.transitionMs() <= 0) this.advance(now);
  }
}

/** A volume as the service shows it (detail and list record). */
export function volumeView(v: VolumeRecord): Record<string, unknown> {
  return {
    id: v.id,
    name: v.name,
    description: v.description,
    sizeGB: v.sizeGB,
    volumeType: v.volumeType,
    status: v.status,
    instanceId: v.instanceId ?? "",
    createdTime: toServiceTimestamp(new Date(v.createdAt)),
    updatedTime: toServiceTimestamp(new Date(v.updatedAt)),
  };
}
