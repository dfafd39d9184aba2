import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "./logging.js";
import { REDACTED, SecretRedactor } from "./outbound-guards.js";

const KEY = "sk-live-7f3a9c2e5b1d4f6a";

function redactorWith(...secrets: string[]): SecretRedactor {
  const r = new SecretRedactor();
  for (const s of secrets) r.add(s);
  return r;
}

describe("SecretRedactor", () => {
  it("replaces every occurrence of every registered secret in text", () => {
    const r = redactorWith(KEY, "another-key-0123");
    expect(r.redact(`invalid key ${KEY}; also ${KEY} and another-key-0123`)).toBe(
      `invalid key ${REDACTED}; also ${REDACTED} and ${REDACTED}`,
    );
  });

  it("ignores secrets too short to be a key, which would mangle ordinary words", () => {
    expect(redactorWith("abc").redact("abc abc")).toBe("abc abc");
  });

  it("serializes a JSON value with its strings redacted, keys included, and as is when clean", () => {
    const r = redactorWith(KEY);
    const status = {
      conditions: [{ type: "Synced", message: `the service said: bad key ${KEY}` }],
      [KEY]: 1,
    };
    expect(JSON.parse(r.serialize(status))).toEqual({
      conditions: [{ type: "Synced", message: `the service said: bad key ${REDACTED}` }],
      [REDACTED]: 1,
    });
    const clean = { conditions: [{ message: "fine" }] };
    expect(r.serialize(clean)).toBe(JSON.stringify(clean));
  });

  it("keeps a source's current secret redacted however many other secrets come after it", () => {
    const r = new SecretRedactor();
    r.keep("service.apiKey", KEY);
    for (let i = 0; i < 100; i++) r.add(`other-secret-${String(i).padStart(4, "0")}`);
    expect(r.redact(`echo ${KEY}`)).toBe(`echo ${REDACTED}`);
  });

  it("drops the oldest of more than 32 secrets that are not current", () => {
    const r = new SecretRedactor();
    r.add(KEY);
    for (let i = 0; i < 32; i++) r.add(`other-secret-${String(i).padStart(4, "0")}`);
    expect(r.redact(`echo ${KEY}`)).toBe(`echo ${KEY}`);
    expect(r.redact("echo other-secret-0031")).toBe(`echo ${REDACTED}`);
  });

  it("keeps a replaced secret among the recent ones, and the new one current", () => {
    const r = new SecretRedactor();
    r.keep("service.apiKey", KEY);
    r.keep("service.apiKey", "sk-live-rotated-0002");
    expect(r.redact(`${KEY} sk-live-rotated-0002`)).toBe(`${REDACTED} ${REDACTED}`);
    for (let i = 0; i < 32; i++) r.add(`other-secret-${String(i).padStart(4, "0")}`);
    expect(r.redact(`${KEY} sk-live-rotated-0002`)).toBe(`${KEY} ${REDACTED}`);
  });

  it("redacts a secret that JSON escapes, in its escaped form in a serialized line", () => {
    const quoted = 'key-with-"quote"-0123';
    const r = redactorWith(quoted);
    expect(r.redact(JSON.stringify({ msg: `said ${quoted}` }))).not.toContain("quote");
  });
});

describe("a logger with a redactor", () => {
  it("blanks a registered key wherever a line quotes it: message, fields, error properties", () => {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const redactor = new SecretRedactor();
    const log = createLogger({ destination, redactor, level: "debug" });
    redactor.add(KEY);
    const err = Object.assign(new Error(`refused: ${KEY}`), { serviceMessage: `bad ${KEY}` });
    log.child({ component: "service" }).debug({ err, note: `key ${KEY}` }, `echo ${KEY}`);
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain(KEY);
    expect(lines[0]).toContain(REDACTED);
    expect(JSON.parse(lines[0] ?? "{}").msg).toBe(`echo ${REDACTED}`);
  });
});
