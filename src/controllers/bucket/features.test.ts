import { describe, expect, it } from "vitest";
import type { BucketSpec } from "../../crds/bucket.js";
import { ObjectStorageAccessDeniedError } from "../../service/object-storage-errors.js";
import { observed } from "./changes.js";
import { bucketStatus } from "./controller.js";
import {
  type BucketRemote,
  canonicalPolicy,
  desiredOf,
  featureChanges,
  markOf,
  OWNER_TAG,
  recreatedOutside,
} from "./features.js";
import { bucketNameProblem } from "./naming.js";

const MARK = "0123456789abcdef.fedcba9876543210";
const spec = (s: Partial<BucketSpec>): BucketSpec =>
  ({ adopt: false, forceDestroy: false, deletionPolicy: "Orphan", ...s }) as BucketSpec;
const remote = (r: Partial<BucketRemote>): BucketRemote => ({
  name: "b",
  url: "http://s3/b",
  region: "us-east-1",
  versioning: "Off",
  lifecycle: [],
  policy: undefined,
  tags: { [OWNER_TAG]: MARK },
  cors: [],
  ...r,
});

describe("canonicalPolicy", () => {
  it("reads a policy as the server re-spells it (MinIO) the same as the user wrote it", () => {
    const written = JSON.stringify({
      Version: "2012-10-17",
      Statement: [
        {
          Sid: "",
          Effect: "Allow",
          Principal: "*",
          Action: "s3:GetObject",
          Resource: "arn:aws:s3:::b/*",
        },
      ],
    });
    const stored =
      '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetObject"],"Resource":["arn:aws:s3:::b/*"]}]}';
    expect(canonicalPolicy(written)).toBe(canonicalPolicy(stored));
  });

  it("tells policies that differ in meaning apart", () => {
    const a = '{"Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"x"}]}';
    const b = '{"Statement":[{"Effect":"Deny","Action":"s3:GetObject","Resource":"x"}]}';
    expect(canonicalPolicy(a)).not.toBe(canonicalPolicy(b));
  });

  it("refuses text that is not a JSON object", () => {
    expect(canonicalPolicy("not json")).toBeUndefined();
    expect(canonicalPolicy("[1]")).toBeUndefined();
  });
});

describe("featureChanges", () => {
  const cases: {
    reason: string;
    spec: Partial<BucketSpec>;
    remote: Partial<BucketRemote>;
    want: string[];
  }[] = [
    { reason: "nothing stated, mark present: nothing to do", spec: {}, remote: {}, want: [] },
    {
      reason: "the owner mark missing is written",
      spec: {},
      remote: { tags: { team: "a" } },
      want: ["tags"],
    },
    {
      reason: "versioning asked, off",
      spec: { versioning: "Enabled" },
      remote: {},
      want: ["versioning"],
    },
    {
      reason: "lifecycle rules in another order are the same",
      spec: {
        lifecycleRules: [
          { id: "a", prefix: "", enabled: true, expirationDays: 1 },
          { id: "b", prefix: "x/", enabled: true, expirationDays: 2 },
        ],
      },
      remote: {
        lifecycle: [
          { id: "b", prefix: "x/", enabled: true, expirationDays: 2 },
          { id: "a", prefix: "", enabled: true, expirationDays: 1 },
        ],
      },
      want: [],
    },
    {
      reason: "a rule changed outside is a change",
      spec: { lifecycleRules: [{ id: "a", prefix: "", enabled: true, expirationDays: 1 }] },
      remote: { lifecycle: [{ id: "a", prefix: "", enabled: true, expirationDays: 9 }] },
      want: ["lifecycle"],
    },
    {
      reason: "an empty policy removes one",
      spec: { policy: "" },
      remote: { policy: "{}" },
      want: ["policy"],
    },
    { reason: "an omitted policy is left", spec: {}, remote: { policy: '{"a":1}' }, want: [] },
    {
      reason: "spec.tags replace the tags, the mark kept",
      spec: { tags: { team: "b" } },
      remote: { tags: { team: "a", [OWNER_TAG]: MARK } },
      want: ["tags"],
    },
  ];
  for (const c of cases) {
    it(c.reason, () => {
      const r = remote(c.remote);
      const tags =
        "notImplemented" in (r.tags as object) ? undefined : (r.tags as Record<string, string>);
      expect(featureChanges(desiredOf(spec(c.spec), MARK, tags), r).map((x) => x.feature)).toEqual(
        c.want,
      );
    });
  }

  it("marks a feature the server does not implement", () => {
    const changes = featureChanges(
      desiredOf(
        spec({
          cors: [
            {
              allowedOrigins: ["*"],
              allowedMethods: ["GET"],
              allowedHeaders: [],
              exposeHeaders: [],
            },
          ],
        }),
        MARK,
        undefined,
      ),
      remote({ cors: { notImplemented: true } }),
    );
    expect(changes).toEqual([{ feature: "cors", notImplemented: true, summary: "CORS rules (1)" }]);
  });
});

describe("bucketNameProblem", () => {
  it.each([
    ["ok-name.1", undefined],
    ["No", "3 to 63"],
    ["a..b", "adjacent periods"],
    ["10.0.0.1", "IP address"],
    ["xn--x", "xn--"],
    ["data-s3alias", "-s3alias"],
  ])("%s", (name, problem) => {
    const got = bucketNameProblem(name);
    if (problem === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(problem);
  });
});

describe("a bucket made under the name of the one bound", () => {
  const obj = {
    metadata: { namespace: "ns", name: "data" },
    status: { creationTime: "2026-01-01T00:00:00Z" },
  } as const;
  const later = new Date("2026-01-01T00:00:01Z");
  it("is another's when created in a later second without this object's mark", () => {
    expect(recreatedOutside(obj, { creationDate: later, tags: {} })).toBe(true);
    expect(recreatedOutside(obj, { creationDate: later, tags: { notImplemented: true } })).toBe(
      true,
    );
    expect(
      recreatedOutside(obj, { creationDate: new Date("2026-01-01T00:00:00.900Z"), tags: {} }),
    ).toBe(false);
  });
  it("is the one bound when it carries this object's mark (a creation date that moved) or none is recorded", () => {
    expect(
      recreatedOutside(obj, { creationDate: later, tags: { "aidc.io/owner": markOf(obj) } }),
    ).toBe(false);
    expect(recreatedOutside({ metadata: obj.metadata }, { creationDate: later, tags: {} })).toBe(
      false,
    );
  });
});

describe("a feature the spec omits whose read is refused", () => {
  const denied = new ObjectStorageAccessDeniedError("S3 GetBucketCors of bucket b: AccessDenied", {
    code: 403,
    endpoint: "s3:GetBucketCors",
  });
  const refuse = async (): Promise<never> => {
    throw denied;
  };

  it("is unread when omitted, a failure when the spec states it", async () => {
    expect(await observed(refuse, true)).toEqual({ unread: true });
    await expect(observed(refuse, false)).rejects.toBe(denied);
    expect(await observed(async () => [], true)).toEqual([]);
  });

  it("changes nothing and has no status field", () => {
    const r = remote({ cors: { unread: true }, lifecycle: { unread: true } });
    expect(featureChanges(desiredOf(spec({}), MARK, undefined), r)).toEqual([]);
    const status = bucketStatus(
      { metadata: { name: "b" }, spec: spec({}) } as never,
      { externalId: "b" } as never,
      r,
      undefined,
    );
    expect(status).not.toHaveProperty("corsRules");
    expect(status).not.toHaveProperty("lifecycleRules");
    expect(status).not.toHaveProperty("unsupported");
    expect(status).toMatchObject({ versioning: "Off", policy: false, tags: 1 });
  });
});
