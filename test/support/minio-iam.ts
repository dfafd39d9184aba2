/**
 * Users of the test MinIO with a policy of the test's choosing, as an administrator makes
 * them: MinIO's admin API takes a user's secret only encrypted (madmin's format), but
 * imports IAM as a plain zip (`PUT /minio/admin/v3/import-iam`, what `mc admin cluster
 * iam import` sends): policies.json, users.json and user_mappings.json. Signed with SigV4
 * by the root keys through the SDK's signer; nothing to build. Their temporary
 * credentials come from MinIO's STS (AssumeRole on the server's endpoint), and are
 * revoked through the admin API (`revoke-tokens`).
 */
import { createHash, createHmac, randomBytes } from "node:crypto";
import { crc32 } from "node:zlib";
import { SignatureV4 } from "@smithy/signature-v4";
import type { LocalS3Server } from "../../src/controlplane/s3-server.js";

/** An S3 policy document. */
export interface S3Policy {
  Version: "2012-10-17";
  Statement: { Effect: "Allow" | "Deny"; Action: string[]; Resource: string[] }[];
}

/** Every S3 action on every bucket but `denied` (none: all of them). */
export function allS3But(...denied: string[]): S3Policy {
  const all = { Effect: "Allow" as const, Action: ["s3:*"], Resource: ["arn:aws:s3:::*"] };
  if (denied.length === 0) return { Version: "2012-10-17", Statement: [all] };
  const deny = { Effect: "Deny" as const, Action: denied, Resource: ["arn:aws:s3:::*"] };
  return { Version: "2012-10-17", Statement: [all, deny] };
}

/** A zip of `files`, stored (not compressed), as Go's archive/zip reads it. */
function storedZip(files: Record<string, string>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of Object.entries(files)) {
    const data = Buffer.from(text);
    const fileName = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(fileName.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // version made by
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(fileName.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, fileName, data);
    centrals.push(central, fileName);
    offset += local.length + fileName.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const bytes = (d: string | ArrayBuffer | ArrayBufferView): string | Buffer =>
  typeof d === "string"
    ? d
    : ArrayBuffer.isView(d)
      ? Buffer.from(d.buffer, d.byteOffset, d.byteLength)
      : Buffer.from(d);

/** SHA-256 (HMAC with a secret) for the signer, from node:crypto. */
class Sha256 {
  private readonly hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash("sha256") : createHmac("sha256", bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

/** Keys that sign a request: a user's, the root's (the admin API), or temporary ones. */
type SigningKeys = Pick<MinioUser, "accessKeyId" | "secretAccessKey"> & { sessionToken?: string };

/** Sends `body` to `path` of `server`, signed by `keys` for `service`; throws with MinIO's answer when refused. */
async function signedCall(
  server: LocalS3Server,
  keys: SigningKeys,
  call: { service: "s3" | "sts"; method: string; path: string; type: string; body: Buffer },
): Promise<string> {
  const url = new URL(`${server.url}${call.path}`);
  const signer = new SignatureV4({
    service: call.service,
    region: server.region,
    credentials: keys,
    sha256: Sha256,
  });
  const signed = await signer.sign({
    method: call.method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: Number(url.port),
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: {
      host: url.host,
      "content-type": call.type,
      "x-amz-content-sha256": createHash("sha256").update(call.body).digest("hex"),
    },
    body: call.body,
  });
  // MinIO answers ready before its IAM is loaded: XMinioServerNotInitialized (503) until then.
  for (let waited = 0; ; waited += 100) {
    const res = await fetch(url, { method: call.method, headers: signed.headers, body: call.body });
    const text = await res.text();
    if (res.ok) return text;
    if (res.status !== 503 || waited >= 10_000) {
      throw new Error(`MinIO ${call.path} answered ${res.status}: ${text}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

const root = (server: LocalS3Server): SigningKeys => ({
  accessKeyId: server.accessKeyId,
  secretAccessKey: server.secretAccessKey,
});

/** Imports `files` into `server`'s IAM; throws with MinIO's answer when refused. */
async function importIam(server: LocalS3Server, files: Record<string, string>): Promise<void> {
  await signedCall(server, root(server), {
    service: "s3",
    method: "PUT",
    path: "/minio/admin/v3/import-iam",
    type: "application/octet-stream",
    body: storedZip(files),
  });
}

/** Adds (or replaces) the MinIO policy `name`, as `mc admin policy create` does. */
export async function addMinioPolicy(
  server: LocalS3Server,
  name: string,
  policy: S3Policy,
): Promise<void> {
  await importIam(server, { "iam-assets/policies.json": JSON.stringify({ [name]: policy }) });
}

/** A MinIO user made by {@link addMinioUser}. */
export interface MinioUser {
  accessKeyId: string;
  secretAccessKey: string;
  /** Replaces the user's policy (a policy changed on the server). */
  setPolicy(policy: S3Policy): Promise<void>;
}

/** Makes a user of `server` whose policy is `policy` (a fresh policy of its own name). */
export async function addMinioUser(server: LocalS3Server, policy: S3Policy): Promise<MinioUser> {
  const accessKeyId = `user${randomBytes(6).toString("hex")}`;
  const secretAccessKey = randomBytes(20).toString("hex");
  const policyName = `${accessKeyId}-policy`;
  const setPolicy = (p: S3Policy) =>
    importIam(server, { "iam-assets/policies.json": JSON.stringify({ [policyName]: p }) });
  await importIam(server, {
    "iam-assets/policies.json": JSON.stringify({ [policyName]: policy }),
    "iam-assets/users.json": JSON.stringify({
      [accessKeyId]: { secretKey: secretAccessKey, status: "enabled" },
    }),
    "iam-assets/user_mappings.json": JSON.stringify({
      [accessKeyId]: { version: 1, policy: policyName },
    }),
  });
  return { accessKeyId, secretAccessKey, setPolicy };
}

/** Temporary credentials, as STS answers them. */
export interface TemporaryCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  expiration: Date;
}

/**
 * Temporary credentials of `user` from MinIO's STS (`Action=AssumeRole` signed by the
 * user's keys, on the server's own endpoint), valid 900 s (MinIO's least), of the
 * revoke type `batch` ({@link revokeTokens} revokes a batch alone).
 */
export async function assumeRole(
  server: LocalS3Server,
  user: SigningKeys,
  batch = "default",
): Promise<TemporaryCredentials> {
  const form = `Action=AssumeRole&Version=2011-06-15&DurationSeconds=900&TokenRevokeType=${batch}`;
  const xml = await signedCall(server, user, {
    service: "sts",
    method: "POST",
    path: "/",
    type: "application/x-www-form-urlencoded",
    body: Buffer.from(form),
  });
  const field = (name: string) => {
    const value = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];
    if (!value) throw new Error(`MinIO's AssumeRole answer has no ${name}: ${xml}`);
    return value;
  };
  return {
    accessKeyId: field("AccessKeyId"),
    secretAccessKey: field("SecretAccessKey"),
    sessionToken: field("SessionToken"),
    expiration: new Date(field("Expiration")),
  };
}

/**
 * Revokes the temporary credentials of `user` of revoke type `batch` (MinIO's
 * `revoke-tokens`, as `mc admin user revoke-tokens`), all of them without: MinIO then
 * refuses them as it refuses expired ones (InvalidAccessKeyId).
 */
export async function revokeTokens(
  server: LocalS3Server,
  user: SigningKeys,
  batch?: string,
): Promise<void> {
  const which = batch ? `tokenRevokeType=${batch}` : "fullRevoke=true";
  const query = `user=${encodeURIComponent(user.accessKeyId)}&${which}`;
  await signedCall(server, root(server), {
    service: "s3",
    method: "POST",
    path: `/minio/admin/v3/revoke-tokens/builtin?${query}`,
    type: "application/octet-stream",
    body: Buffer.alloc(0),
  });
}

/**
 * Revokes every session of the identity `own` (temporary credentials, e.g. from STS
 * AssumeRoleWithWebIdentity) belongs to, asked with `own` itself (MinIO's self-revoke of
 * `revoke-tokens`): MinIO then refuses them as it refuses expired ones.
 */
export async function revokeOwnTokens(server: LocalS3Server, own: SigningKeys): Promise<void> {
  await signedCall(server, own, {
    service: "s3",
    method: "POST",
    path: "/minio/admin/v3/revoke-tokens/openid?fullRevoke=true",
    type: "application/octet-stream",
    body: Buffer.alloc(0),
  });
}
