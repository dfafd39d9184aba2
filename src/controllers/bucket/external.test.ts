import pino from "pino";
import { describe, expect, it } from "vitest";
import type { ObjectStorageClient } from "../../service/object-storage.js";
import { ObjectStorageNotImplementedError } from "../../service/object-storage-errors.js";
import type { ManagedCall } from "../managed/call.js";
import { createMayHaveHappened } from "../managed/create-recovery.js";
import { formatOwnerMark, ownerMark } from "../managed/tenancy.js";
import { BucketExternalClient, type BucketObject } from "./external.js";
import type { BucketRemote } from "./features.js";

/** A fake object storage: `answers` stands in for the methods the case needs. */
function client(
  answers: Partial<Record<keyof ObjectStorageClient, unknown>>,
  exportRefusal?: (obj: BucketObject) => string | undefined,
) {
  const calls: string[] = [];
  const fake = new Proxy(
    {},
    {
      get(_t, prop: string) {
        // Not a thenable: the resolver's promise resolves to the fake itself.
        if (prop === "then") return undefined;
        if (prop === "region") return "us-east-1";
        if (prop === "bucketUrl") return (b: string) => `http://s3/${b}`;
        return async (...args: unknown[]) => {
          calls.push(`${prop} ${args[0] ?? ""}`.trim());
          const a = answers[prop as keyof ObjectStorageClient];
          if (a instanceof Error) throw a;
          return typeof a === "function" ? (a as (...x: unknown[]) => unknown)(...args) : a;
        };
      },
    },
  ) as ObjectStorageClient;
  const external = new BucketExternalClient(async () => fake, new Map(), 1_000, exportRefusal);
  return { external, calls };
}

function call(spec: Partial<BucketObject["spec"]>): ManagedCall<BucketObject> {
  const obj: BucketObject = {
    apiVersion: "aidc.io/v1alpha1",
    kind: "Bucket",
    metadata: { name: "data", namespace: "ns", uid: "u1", generation: 1 },
    spec: { adopt: false, forceDestroy: false, deletionPolicy: "Orphan", ...spec },
  };
  return {
    obj,
    refs: undefined,
    now: () => new Date("2026-01-01T00:00:00Z"),
    log: pino({ level: "silent" }),
    normal: () => undefined,
    warning: () => undefined,
    annotate: async () => obj,
  };
}

/** A bucket in the versioning state Off, marked as the object's, with nothing else set. */
function observedRemote(): BucketRemote {
  return {
    name: "data",
    url: "http://s3/data",
    region: "us-east-1",
    versioning: "Off",
    lifecycle: [],
    policy: undefined,
    tags: { "aidc.io/owner": formatOwnerMark(ownerMark("ns", "data")) },
    cors: [],
  };
}

describe("the Bucket's create", () => {
  const cases = [
    {
      reason: "a name another account has is refused before any create",
      head: "Forbidden",
      spec: {},
      refusal: "BucketNameTaken",
    },
    {
      reason: "a bucket of this account is not taken without spec.adopt",
      head: "Present",
      spec: {},
      refusal: "BucketExistsNotAdopted",
    },
    {
      reason: "with spec.adopt it may be",
      head: "Present",
      spec: { adopt: true },
      refusal: undefined,
    },
    { reason: "an absent name may be created", head: "Absent", spec: {}, refusal: undefined },
  ] as const;
  for (const c of cases) {
    it(c.reason, async () => {
      const { external, calls } = client({
        headBucket: c.head,
        accountBuckets: [{ name: "data" }],
      });
      const refusal = await external.preflight(call(c.spec));
      expect(refusal?.reason).toBe(c.refusal);
      // The account's list decides whose a bucket its HEAD finds is (ownership.test.ts).
      const listed = c.head === "Present" && !("adopt" in c.spec) ? ["accountBuckets"] : [];
      expect(calls).toEqual(["headBucket data", ...listed]);
    });
  }

  it("says a HEAD answered 403 may be credentials without s3:ListBucket, and looks again every poll", async () => {
    const { external } = client({ headBucket: "Forbidden" });
    const refusal = await external.preflight(call({}));
    expect(refusal?.retry).toBe(true);
    expect(refusal?.message).toContain("or the S3 credentials need s3:ListBucket on bucket data");
  });

  it("refuses BucketAlreadyExists and an unasked adoption as creates that did not happen", async () => {
    for (const [answer, reason] of [
      ["TakenElsewhere", "BucketNameTaken"],
      ["AlreadyOwnedByYou", "BucketExistsNotAdopted"],
    ] as const) {
      const { external } = client({ createBucket: answer });
      const err = await external.create(call({}), "t").catch((e: unknown) => e);
      expect(err).toMatchObject({ reason, retryable: false });
      // The pending marker is dropped: no lookup for a bucket that is not ours.
      expect(createMayHaveHappened(err)).toBe(false);
    }
  });

  it("adopts with spec.adopt a bucket its HEAD finds, sending no CreateBucket (answered 200 by S3 in us-east-1)", async () => {
    const { external, calls } = client({ headBucket: "Present", listBuckets: [{ name: "data" }] });
    expect(await external.create(call({ adopt: true }), "t")).toEqual({ externalId: "data" });
    expect(calls).toEqual(["headBucket data", "listBuckets"]);
  });

  it("refuses with spec.adopt a bucket its HEAD finds but the account does not list: another account's that grants a read", async () => {
    const { external, calls } = client({
      headBucket: "Present",
      listBuckets: [],
      createBucket: "TakenElsewhere",
    });
    await expect(external.create(call({ adopt: true }), "t")).rejects.toMatchObject({
      reason: "BucketNameTaken",
    });
    expect(calls).toEqual(["headBucket data", "listBuckets", "createBucket data"]);
  });

  it("adopts BucketAlreadyOwnedByYou with spec.adopt, writing nothing at create", async () => {
    const { external, calls } = client({ headBucket: "Absent", createBucket: "AlreadyOwnedByYou" });
    expect(await external.create(call({ adopt: true }), "t")).toEqual({ externalId: "data" });
    expect(calls).toEqual(["headBucket data", "createBucket data"]);
  });

  it("marks a bucket it created with the owner tag at once", async () => {
    const { external, calls } = client({ createBucket: "Created", putTags: undefined });
    expect(await external.create(call({ tags: { team: "a" } }), "t")).toEqual({
      externalId: "data",
    });
    expect(calls).toEqual(["createBucket data", "putTags data"]);
  });

  it("binds a bucket it made whose owner tag the storage refused, the tag then drift", async () => {
    const denied = new Error("S3 PutBucketTagging: AccessDenied");
    const { external, calls } = client({
      createBucket: "Created",
      putTags: denied,
      headBucket: "Present",
      getVersioning: "Off",
      getLifecycle: [],
      getPolicy: undefined,
      getTags: {},
      getCors: [],
      listBuckets: [],
    });
    // Bound at once: the pending marker is not left to a lookup that ends BucketExistsNotAdopted.
    expect(await external.create(call({}), "t")).toEqual({ externalId: "data" });
    expect(calls).toEqual(["createBucket data", "putTags data", "putTags data"]);
    const o = await external.observe(call({}), "data");
    expect(o).toMatchObject({ exists: true, upToDate: false, differs: ["tags"] });
  });
});

describe("the Bucket's update", () => {
  it("applies what the server implements and reports the rest as FeatureNotImplemented", async () => {
    const notImplemented = new ObjectStorageNotImplementedError(
      "S3 PutBucketCors: NotImplemented",
      {
        code: 501,
        endpoint: "s3:PutBucketCors",
      },
    );
    const { external, calls } = client({
      putVersioning: undefined,
      putCors: notImplemented,
    });
    const c = call({
      versioning: "Enabled",
      cors: [
        { allowedOrigins: ["*"], allowedMethods: ["GET"], allowedHeaders: [], exposeHeaders: [] },
      ],
    });
    const result = await external.update(c, "data", observedRemote());
    expect(result).toMatchObject({ outcome: "Refused", reason: "FeatureNotImplemented" });
    expect(result.outcome === "Refused" && result.message).toContain("CORS");
    expect(result.outcome === "Refused" && result.message).toContain("applied: versioning Enabled");
    expect(calls).toEqual(["putVersioning data", "putCors data"]);
  });
});

describe("a Bucket whose spec.exportTo.secretName may not be written", () => {
  const mark = formatOwnerMark(ownerMark("ns", "data"));
  const inSync = {
    headBucket: "Present",
    getVersioning: "Off",
    getLifecycle: [],
    getPolicy: undefined,
    getTags: { "aidc.io/owner": mark },
    getCors: [],
    listBuckets: [],
  };
  const refusal = (obj: BucketObject) =>
    obj.spec.exportTo && "secretName" in obj.spec.exportTo ? "the setting is off" : undefined;

  it("is observed as refused (not as drift), not up to date, the bucket itself Ready", async () => {
    const { external } = client(inSync, refusal);
    const o = await external.observe(call({ exportTo: { secretName: "keys" } }), "data");
    expect(o).toMatchObject({
      exists: true,
      upToDate: false,
      differs: [],
      refused: { reason: "CredentialsExportNotAllowed", message: "the setting is off" },
      ready: { status: "True", reason: "Available" },
    });
    const plain = await external.observe(call({ exportTo: { configMapName: "cm" } }), "data");
    expect(plain).toMatchObject({ exists: true, upToDate: true, differs: [] });
  });

  it("is refused CredentialsExportNotAllowed at update, after applying the spec's changes", async () => {
    const { external, calls } = client({ putVersioning: undefined }, refusal);
    const result = await external.update(
      call({ versioning: "Enabled", exportTo: { secretName: "keys" } }),
      "data",
      observedRemote(),
    );
    expect(result).toEqual({
      outcome: "Refused",
      reason: "CredentialsExportNotAllowed",
      message: "the setting is off; applied: versioning Enabled",
    });
    expect(calls).toEqual(["putVersioning data"]);
  });
});

describe("a correction of a change made outside the cluster", () => {
  const mark = formatOwnerMark(ownerMark("ns", "data"));
  /** A bucket as the spec `versioning: Enabled` says until `drifted` turns it Off. */
  function storage() {
    const remote = { versioning: "Enabled" };
    const answers = {
      headBucket: "Present",
      getVersioning: () => remote.versioning,
      getLifecycle: [],
      getPolicy: undefined,
      getTags: { "aidc.io/owner": mark },
      getCors: [],
      listBuckets: [],
      putVersioning: (_name: string, v: string) => {
        remote.versioning = v;
      },
    };
    return { ...client(answers), drifted: () => (remote.versioning = "Off") };
  }
  function warned(generation: number) {
    const warnings: string[] = [];
    const c = call({ versioning: "Enabled" });
    c.obj.metadata.generation = generation;
    return { c: { ...c, warning: (reason: string) => warnings.push(reason) }, warnings };
  }

  it("is drift at the generation this process read up to date, though the cached status lags", async () => {
    const { external, drifted } = storage();
    const { c, warnings } = warned(1);
    expect(await external.observe(c, "data")).toMatchObject({ upToDate: true });
    drifted();
    const o = await external.observe(c, "data");
    expect(o).toMatchObject({ upToDate: false, differs: ["versioning"] });
    await external.update(c, "data", (o as { remote: BucketRemote }).remote);
    expect(warnings).toEqual(["DriftCorrected"]);
    expect(external.applied.get("u1")).toMatchObject({ drift: true });
  });

  it("is no drift when the spec changed since, or this process never read it up to date", async () => {
    const { external, drifted } = storage();
    const first = warned(1);
    expect(await external.observe(first.c, "data")).toMatchObject({ upToDate: true });
    drifted();
    const later = warned(2);
    const o = await external.observe(later.c, "data");
    await external.update(later.c, "data", (o as { remote: BucketRemote }).remote);
    expect(later.warnings).toEqual([]);
    expect(external.applied.get("u1")).toMatchObject({ drift: false });

    const fresh = storage();
    fresh.drifted();
    const again = warned(1);
    const seen = await fresh.external.observe(again.c, "data");
    await fresh.external.update(again.c, "data", (seen as { remote: BucketRemote }).remote);
    expect(again.warnings).toEqual([]);
  });
});

describe("a bound bucket name that is no bucket name (a hand-set aidc.io/external-id)", () => {
  it.each(["Bad_Name", "ab", "../x", "a".repeat(129)])(
    "%s is InvalidRemoteId, nothing sent",
    async (name) => {
      const { external, calls } = client({ headBucket: "Present" });
      for (const run of [
        () => external.observe(call({}), name),
        () => external.update(call({}), name, observedRemote()),
        () => external.beforeDelete(call({}), name),
        () => external.delete(call({}), name),
      ]) {
        await expect(run()).rejects.toMatchObject({
          reason: "InvalidRemoteId",
          message: expect.stringContaining("of the annotation aidc.io/external-id"),
        });
      }
      expect(calls).toEqual([]);
    },
  );
});
