/**
 * A ServiceConnection's object storage (`spec.objectStorage`): its S3 endpoint and where
 * its credentials come from, a Secret's key pair or a web identity of its own (the role
 * the operator's projected token is exchanged for), exactly one of them.
 */
import { z } from "zod";
import { described, withRules } from "./definition.js";
import { objectName } from "./fields.js";

export const secretKey = (description: string) =>
  described(
    z
      .string()
      .min(1)
      .max(253)
      .regex(/^[-._a-zA-Z0-9]+$/),
    description,
  );

/** An http(s) URL without a user or password in it (kubectl get and messages show it). */
export const httpUrl = (description: string) =>
  withRules(
    described(
      z
        .string()
        .min(8)
        .max(2048)
        .regex(/^https?:\/\/[^\s/?#]+[^\s]*$/),
      description,
    ),
    {
      rule: "!self.matches('^[a-zA-Z]+://[^/?#]*@')",
      message:
        "must not carry a user or password (user:password@host): kubectl get, status and messages show this URL; credentials go in the Secret the connection names",
    },
  );

/** A role of the connection's own, assumed with the operator's projected token. */
const webIdentitySchema = z
  .object({
    roleArn: described(
      z.string().min(1).max(2048),
      "The role to assume (STS AssumeRoleWithWebIdentity) with the operator's own projected token (the file of its AWS_WEB_IDENTITY_TOKEN_FILE); its trust policy must accept that token's issuer, subject and audience.",
    ),
    roleSessionName: described(
      z
        .string()
        .min(2)
        .max(64)
        .regex(/^[\w+=,.@-]+$/),
      "The role session name, as STS records it; the SDK's default when omitted.",
    ).optional(),
    stsEndpoint: httpUrl(
      "The STS URL of this storage when it is not AWS's (MinIO: its S3 endpoint); default AWS's STS of the region.",
    ).optional(),
  })
  .meta({
    description:
      "The connection's S3 credentials from web identity: the operator exchanges its projected token for this role's temporary credentials, renewed before they expire, through the proxy its S3 calls take. Exactly one of credentialsSecretRef and webIdentity.",
  });

/** Where the object storage of the account is, and its S3 credentials. */
export const objectStorageSchema = withRules(
  z
    .object({
      endpoint: httpUrl("S3 endpoint of the account's object storage ({object_storage_url})."),
      region: described(
        z.string().min(1).max(64),
        "S3 region to sign requests for; the S3 client's default when omitted.",
      ).optional(),
      credentialsSecretRef: z
        .object({
          namespace: objectName(
            "Namespace of the Secret (the operator reads Secrets in one namespace only, see apiKeySecretRef.namespace).",
            63,
          ),
          name: objectName("Name of the Secret."),
          accessKeyIdKey: secretKey("Key in the Secret's data holding the access key id.").default(
            "accessKeyId",
          ),
          secretAccessKeyKey: secretKey(
            "Key in the Secret's data holding the secret access key.",
          ).default("secretAccessKey"),
          sessionTokenKey: secretKey(
            "Key in the Secret's data holding the session token of temporary credentials (STS), sent with every request. Default sessionToken, read when the Secret has it (long-lived keys have none); a key named here must be there.",
          ).optional(),
        })
        .meta({
          description:
            "The Secret that holds the S3 access key id and secret key, and the session token of temporary ones; read at every request, so rotated credentials are used at once. Exactly one of credentialsSecretRef and webIdentity.",
        })
        .optional(),
      webIdentity: webIdentitySchema.optional(),
      exportCredentials: described(
        z.boolean(),
        "Allow a Bucket of this connection to write the S3 key pair into the Secret of its spec.exportTo.secretName (in the Bucket's namespace), where the operator's objectStorage.exportCredentials is on as well. Default false: no Bucket exports the credentials.",
      ).default(false),
    })
    .meta({ description: "The account's S3-compatible object storage, for Bucket objects." }),
  {
    rule: "has(self.credentialsSecretRef) != has(self.webIdentity)",
    message:
      "set exactly one of credentialsSecretRef (a Secret's key pair) and webIdentity (a role the operator's projected token is exchanged for)",
  },
);
