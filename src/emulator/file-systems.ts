/**
 * The emulator's file systems and their mounts (docs/service-assumptions.md, "File
 * systems and mounts"): a new file system or mount is `creating` for
 * `fileStorageDelayMs`, then `available` (a file system) or `mounted` (a mount); a
 * deleted one is `deleting` that long, then gone. Transitions happen lazily in
 * {@link FileSystemStore.advance}, which costs nothing while none is due.
 */

/** A mount of a file system on a CCI instance. */
export interface MountRecord {
  id: string;
  instanceId: string;
  mountPath?: string;
  address: string;
  status: "creating" | "mounted" | "deleting";
  createdAt: number;
}

/** A file system. */
export interface FileSystemRecord {
  id: string;
  name: string;
  description: string;
  sizeGB: number;
  type: string;
  protocol: string;
  aidcId: number;
  status: "creating" | "available" | "deleting";
  createdAt: number;
  /** List operations show the file system from this time on. */
  visibleAt: number;
  mounts: Map<string, MountRecord>;
}

/** A transition due at a time: a file system (`mountId` absent) or one of its mounts. */
interface Due {
  at: number;
  fsId: string;
  mountId?: string;
}

/** The file systems of the emulated service, by id. */
export class FileSystemStore {
  readonly byId = new Map<string, FileSystemRecord>();
  private due: Due[] = [];

  /** Forgets everything. */
  clear(): void {
    this.byId.clear();
    this.due = [];
  }

  /** Adds `fs` (status `creating`), available after `delayMs`. */
  add(fs: FileSystemRecord, delayMs: number): void {
    this.byId.set(fs.id, fs);
    this.schedule({ at: fs.createdAt + delayMs, fsId: fs.id }, fs.createdAt);
  }

  /** Adds `mount` to `fs` (status `creating`), mounted after `delayMs`. */
  addMount(fs: FileSystemRecord, mount: MountRecord, delayMs: number): void {
    fs.mounts.set(mount.id, mount);
    this.schedule(
      { at: mount.createdAt + delayMs, fsId: fs.id, mountId: mount.id },
      mount.createdAt,
    );
  }

  /** Starts deleting `fs` (status `deleting`), gone after `delayMs`; a second call changes nothing. */
  remove(fs: FileSystemRecord, now: number, delayMs: number): void {
    if (fs.status === "deleting") return;
    fs.status = "deleting";
    this.schedule({ at: now + delayMs, fsId: fs.id }, now);
  }

  /** Starts removing `mount` of `fs`, gone after `delayMs`; a second call changes nothing. */
  removeMount(fs: FileSystemRecord, mount: MountRecord, now: number, delayMs: number): void {
    if (mount.status === "deleting") return;
    mount.status = "deleting";
    this.schedule({ at: now + delayMs, fsId: fs.id, mountId: mount.id }, now);
  }

  /** Applies every transition due at `now`. */
  advance(now: number): void {
    if (this.due.length === 0 || (this.due[0] as Due).at > now) return;
    const later: Due[] = [];
    for (const d of this.due) {
      if (d.at > now) later.push(d);
      else this.apply(d);
    }
    this.due = later;
  }

  private schedule(d: Due, now = 0): void {
    if (d.at <= now) {
      this.apply(d);
      return;
    }
    this.due.push(d);
    this.due.sort((a, b) => a.at - b.at);
  }

  private apply(d: Due): void {
    const fs = this.byId.get(d.fsId);
    if (!fs) return;
    if (d.mountId === undefined) {
      if (fs.status === "creating") fs.status = "available";
      else if (fs.status === "deleting") this.byId.delete(fs.id);
      return;
    }
    const mount = fs.mounts.get(d.mountId);
    if (!mount) return;
    if (mount.status === "creating") mount.status = "mounted";
    else if (mount.status === "deleting") fs.mounts.delete(mount.id);
  }
}
