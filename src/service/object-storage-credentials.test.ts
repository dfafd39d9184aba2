import { describe, expect, it } from "vitest";
import {
  credentialsHint,
  noteCredentials,
  refusesCredentials,
} from "./object-storage-credentials.js";

/** What a refusal of the S3 credentials adds to its message (names, never a value). */
describe("credentialsHint", () => {
  const refused = (token: boolean) => {
    const err = new Error("refused");
    noteCredentials(err, "the Secret ops/s3", token ? { "x-amz-security-token": "t" } : {});
    return err;
  };

  it("says temporary credentials expired or were revoked when their token was sent", () => {
    for (const code of ["InvalidAccessKeyId", "ExpiredToken", "InvalidTokenId"]) {
      expect(credentialsHint(refused(true), code)).toContain(
        "the S3 credentials of the Secret ops/s3 were refused with their session token: temporary ones expired or revoked",
      );
    }
    // AWS names an expired token so whatever was sent.
    expect(credentialsHint(refused(false), "ExpiredToken")).toContain("expired or revoked");
  });

  it("says a session token is missing when the server asks for one that was not sent", () => {
    expect(credentialsHint(refused(false), "InvalidTokenId")).toBe(
      " (the S3 credentials of the Secret ops/s3 have no session token: temporary credentials need theirs)",
    );
  });

  it("names the source of any other refusal, and adds nothing to an error it did not see", () => {
    expect(credentialsHint(refused(true), "SignatureDoesNotMatch")).toBe(
      " (fix the S3 credentials of the Secret ops/s3: the next call uses them)",
    );
    expect(credentialsHint(new Error("unseen"), "InvalidAccessKeyId")).toBe("");
  });

  it("says a source that renews its credentials asks for new ones at the next call", () => {
    const err = new Error("refused");
    noteCredentials(
      err,
      "web identity (role r, token file /t)",
      { "x-amz-security-token": "t" },
      true,
    );
    expect(credentialsHint(err, "InvalidAccessKeyId")).toBe(
      " (the S3 credentials of web identity (role r, token file /t) were refused: expired, revoked or not valid for this storage; the next call asks for new ones)",
    );
  });

  it("takes a 401 or a credential code as a refusal of the credentials, not AccessDenied", () => {
    expect(refusesCredentials(401, undefined)).toBe(true);
    expect(refusesCredentials(403, "InvalidTokenId")).toBe(true);
    expect(refusesCredentials(403, "AccessDenied")).toBe(false);
  });
});
