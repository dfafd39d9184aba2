/**
 * The S3 key pair of a Bucket's spec.exportTo Secret: written only when the connection
 * allows it, the refusal naming the setting and no key; and the Secret body, encoded,
 * passes the process's SecretRedactor intact although the redactor knows both keys.
 */
import { describe, expect, it } from "vitest";
import { REDACTED, SecretRedactor } from "../../runtime/redaction.js";
import { secretData } from "../managed/export.js";
import { CREDENTIAL_KEYS, credentialsExport } from "./storage.js";

const pair = { accessKeyId: "AKIAEXAMPLEKEY123", secretAccessKey: "s3cr3t/Key+With=Marks" };
const storage = (exportCredentials?: boolean) => ({
  endpoint: "https://s3.example.com",
  credentials: async () => pair,
  ...(exportCredentials === undefined ? {} : { exportCredentials }),
});

describe("credentialsExport", () => {
  it("gives the key pair under the AWS names when the connection allows it", async () => {
    expect(await credentialsExport({ name: "acct", objectStorage: storage(true) })).toEqual({
      data: {
        [CREDENTIAL_KEYS.accessKeyId]: pair.accessKeyId,
        [CREDENTIAL_KEYS.secretAccessKey]: pair.secretAccessKey,
      },
    });
    expect(CREDENTIAL_KEYS).toEqual({
      accessKeyId: "AWS_ACCESS_KEY_ID",
      secretAccessKey: "AWS_SECRET_ACCESS_KEY",
    });
  });

  it("refuses, naming the setting and no key, when the connection does not allow it", async () => {
    let read = false;
    const unread = {
      ...storage(false),
      credentials: async () => {
        read = true;
        return pair;
      },
    };
    const named = await credentialsExport({ name: "acct", objectStorage: unread });
    expect(named).toEqual({
      refused:
        "ServiceConnection acct (spec.objectStorage.exportCredentials) does not allow exporting credentials",
    });
    const byDefault = await credentialsExport({ name: undefined, objectStorage: storage() });
    expect(byDefault).toEqual({
      refused:
        "the default connection (the operator's objectStorage.exportCredentials) does not allow exporting credentials",
    });
    expect(read).toBe(false);
    expect(await credentialsExport({ name: "acct", objectStorage: undefined })).toEqual({
      refused:
        "ServiceConnection acct (spec.objectStorage.exportCredentials): no object storage is configured",
    });
  });

  it("is written base64-encoded, which the redactor that knows the keys leaves intact", async () => {
    const redactor = new SecretRedactor();
    redactor.add(pair.accessKeyId);
    redactor.add(pair.secretAccessKey);
    const details = await credentialsExport({ name: "acct", objectStorage: storage(true) });
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
