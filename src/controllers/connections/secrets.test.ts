import { describe, expect, it } from "vitest";
import type { ServiceConnection } from "../../crds/serviceconnection.js";
import { connectionsNaming } from "./secrets.js";

const conn = (name: string, key: string, s3?: { namespace: string; name: string }) =>
  ({
    metadata: { name },
    spec: {
      apiKeySecretRef: { namespace: "ops", name: key, key: "apiKey" },
      ...(s3
        ? { objectStorage: { endpoint: "https://s3.example", credentialsSecretRef: s3 } }
        : {}),
    },
  }) as unknown as ServiceConnection;
const secret = (namespace: string, name: string) => ({ metadata: { namespace, name } });

describe("connectionsNaming", () => {
  const all = [
    conn("a", "a-key", { namespace: "ops", name: "shared-s3" }),
    conn("b", "b-key", { namespace: "ops", name: "shared-s3" }),
    conn("c", "shared-s3"),
  ];

  it("finds the connections a Secret holds the API key or the S3 key pair of", () => {
    expect(connectionsNaming(secret("ops", "a-key"), all)).toEqual(["a"]);
    // A rotated S3 key pair rechecks the connections it serves, as a rotated API key does.
    expect(connectionsNaming(secret("ops", "shared-s3"), all)).toEqual(["a", "b", "c"]);
  });

  it("matches a Secret by namespace and name both", () => {
    expect(connectionsNaming(secret("other", "a-key"), all)).toEqual([]);
    expect(connectionsNaming(secret("ops", "unrelated"), all)).toEqual([]);
  });
});
