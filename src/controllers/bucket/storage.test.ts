/**
 * The S3 key pair of a Bucket's spec.exportTo Secret: written only when the operator's
 * setting is on and the connection allows it, each refusal naming the setting to turn
 * on and no key; and the Secret body, encoded, passes the process's SecretRedactor
 * intact although the redactor knows both keys.
 */
import { createServer } from "node:http";
import { describe, expect, it } from "vitest";
import { operatorConfigSchema } from "../../config/schema.js";
import { REDACTED, SecretRedactor } from "../../runtime/outbound-guards.js";
import { ServiceClient } from "../../service/client.js";
import { ServiceConnections } from "../connections/registry.js";
import { secretData } from "../managed/export.js";
import {
  CREDENTIAL_KEYS,
  CREDENTIALS_EXPORT_DISABLED,
  credentialsExport,
  credentialsExportRefusal,
  objectStorageOf,
} from "./storage.js";

const pair = { accessKeyId: "AKIAEXAMPLEKEY123", secretAccessKey: "s3cr3t/Key+With=Marks" };
const storage = (exportCredentials?: boolean) => ({
  endpoint: "https://s3.example.com",
  credentials: async () => pair,
  ...(exportCredentials === undefined ? {} : { exportCredentials }),
});

describe("credentialsExportRefusal", () => {
  const cases: {
    reason: string;
    enabled: boolean;
    conn: Parameters<typeof credentialsExportRefusal>[1];
    refused: string | undefined;
  }[] = [
    {
      reason: "the operator's setting off refuses whatever the connection allows",
      enabled: false,
      conn: { name: "acct", objectStorage: storage(true) },
      refused: CREDENTIALS_EXPORT_DISABLED,
    },
    {
      reason: "a ServiceConnection must allow it too",
      enabled: true,
      conn: { name: "acct", objectStorage: storage(false) },
      refused:
        "ServiceConnection acct does not allow exporting credentials (set its spec.objectStorage.exportCredentials to true)",
    },
    {
      reason: "a ServiceConnection that says nothing does not allow it",
      enabled: true,
      conn: { name: "acct", objectStorage: storage() },
      refused:
        "ServiceConnection acct does not allow exporting credentials (set its spec.objectStorage.exportCredentials to true)",
    },
    {
      reason: "a connection without object storage has nothing to export",
      enabled: true,
      conn: { name: "acct", objectStorage: undefined },
      refused: "ServiceConnection acct has no object storage",
    },
    {
      reason: "both allowing, nothing refuses",
      enabled: true,
      conn: { name: "acct", objectStorage: storage(true) },
      refused: undefined,
    },
    {
      reason: "the default connection follows the operator's setting",
      enabled: true,
      conn: { name: undefined, objectStorage: storage(true) },
      refused: undefined,
    },
  ];
  it.each(cases)("$reason", ({ enabled, conn, refused }) => {
    expect(credentialsExportRefusal(enabled, conn)).toBe(refused);
  });

  it("names the operator setting and the chart value when the feature is off", () => {
    expect(CREDENTIALS_EXPORT_DISABLED).toContain("config objectStorage.exportCredentials");
    expect(CREDENTIALS_EXPORT_DISABLED).toContain("chart value objectStorage.exportCredentials");
  });
});

describe("credentialsExport", () => {
  it("gives the key pair under the AWS names when both allow it", async () => {
    expect(await credentialsExport(true, { name: "acct", objectStorage: storage(true) })).toEqual({
      data: {
        [CREDENTIAL_KEYS.accessKeyId]: pair.accessKeyId,
        [CREDENTIAL_KEYS.secretAccessKey]: pair.secretAccessKey,
      },
    });
    expect(CREDENTIAL_KEYS).toEqual({
      accessKeyId: "AWS_ACCESS_KEY_ID",
      secretAccessKey: "AWS_SECRET_ACCESS_KEY",
      sessionToken: "AWS_SESSION_TOKEN",
    });
  });

  it("gives the session token of temporary credentials beside the pair", async () => {
    const temporary = {
      ...storage(true),
      credentials: async () => ({ ...pair, sessionToken: "tok" }),
    };
    const out = await credentialsExport(true, { name: "acct", objectStorage: temporary });
    expect(out).toEqual({
      data: {
        [CREDENTIAL_KEYS.accessKeyId]: pair.accessKeyId,
        [CREDENTIAL_KEYS.secretAccessKey]: pair.secretAccessKey,
        [CREDENTIAL_KEYS.sessionToken]: "tok",
      },
    });
  });

  it("refuses without reading the key pair, and names no key", async () => {
    let read = false;
    const unread = {
      ...storage(false),
      credentials: async () => {
        read = true;
        return pair;
      },
    };
    const refused = await credentialsExport(true, { name: "acct", objectStorage: unread });
    expect(refused).toEqual({
      refused:
        "ServiceConnection acct does not allow exporting credentials (set its spec.objectStorage.exportCredentials to true)",
      reason: "CredentialsExportNotAllowed",
    });
    const off = await credentialsExport(false, {
      name: "acct",
      objectStorage: { ...unread, exportCredentials: true },
    });
    expect(off).toEqual({
      refused: CREDENTIALS_EXPORT_DISABLED,
      reason: "CredentialsExportNotAllowed",
    });
    expect(read).toBe(false);
    expect(JSON.stringify([refused, off])).not.toContain(pair.secretAccessKey);
  });

  it("is written base64-encoded, which the redactor that knows the keys leaves intact", async () => {
    const redactor = new SecretRedactor();
    redactor.add(pair.accessKeyId);
    redactor.add(pair.secretAccessKey);
    const details = await credentialsExport(true, { name: "acct", objectStorage: storage(true) });
    if (!("data" in details)) throw new Error("refused");
    const body = { kind: "Secret", data: secretData(details.data) };
    const sent = JSON.parse(redactor.serialize(body)) as { data: Record<string, string> };
    expect(sent).toEqual(body);
    const decoded = Object.fromEntries(
      Object.entries(sent.data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]),
    );
    expect(decoded).toEqual(details.data);
    // The raw pair, as any message would carry it, is blanked.
    expect(redactor.serialize(details.data)).not.toContain(pair.secretAccessKey);
    expect(redactor.serialize(details.data)).toContain(REDACTED);
  });
});

describe("objectStorageOf", () => {
  it("gives the S3 client the connections' mayCall: a process that may no longer act sends nothing", async () => {
    const received: string[] = [];
    const server = createServer((req, res) => {
      received.push(`${req.method} ${req.url}`);
      res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const endpoint = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const config = operatorConfigSchema.parse({ service: { baseUrl: "https://aidc.invalid" } });
    const service = new ServiceClient({ baseUrl: "https://aidc.invalid", apiKey: () => "" });
    const connections = new ServiceConnections({
      defaultClient: service,
      defaultObjectStorage: { endpoint, credentials: async () => pair },
      newClient: () => service,
      mayCall: () => false,
    });
    try {
      const client = await objectStorageOf({ connections, config })({
        metadata: { namespace: "team-a", name: "b" },
      } as never);
      await expect(client?.createBucket("fenced")).rejects.toThrow(/was stopped/);
      expect(received).toEqual([]);
      client?.close();
    } finally {
      service.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
