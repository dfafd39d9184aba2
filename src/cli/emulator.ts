import type { Command } from "commander";
import { pino } from "pino";
import { commaList } from "../config/settings.js";
import type { FaultRuleInput } from "../emulator/faults.js";
import {
  KIND_SETTING_NAMES,
  type KindSettingName,
  kindSettingDefaults,
  kindSettingDescription,
  kindSettingFlag,
} from "../emulator/kind-settings.js";
import { isEndpointName } from "../service/endpoints.js";
import { waitForSignal } from "./signals.js";

interface EmulatorFlags extends Record<KindSettingName, string> {
  port: string;
  host: string;
  apiKey?: string;
  subscriptionDelayMs: string;
  saveImageDurationMs: string;
  listVisibilityDelayMs: string;
  detailVisibilityDelayMs: string;
  nasReleaseDelayMs: string;
  repeatDeleteStatus: string;
  failedOrdersLeaveResources?: boolean;
  listsOmitDescription?: boolean;
  listsOmitEnv?: boolean;
  httpStatusMirrorsEnvelope?: boolean;
  unknownIdStatus: string;
  pageSizeCap: string;
  listShrinksAfterFirstPage: string;
  listGrowsAfterFirstPage: string;
  basePath: string;
  missingOperations: string;
  subscriptionResultShape: string;
  subscriptionResultRetentionMs: string;
  nasStatusCase: string;
  emptyListData: string;
  idFormat: string;
  subscriptionKeyFormat: string;
  timestampFormat: string;
  createAnswerShape: string;
  listOrder: string;
  errorRate: string;
  latencyMs: string;
  randomSeed: string;
  idTag?: string;
  keepAliveTimeoutMs?: string;
  verbose?: boolean;
}

function oneOf<T extends string>(name: string, values: readonly T[], value: string): T {
  const found = values.find((v) => v === value);
  if (!found) throw new Error(`--${name} must be one of ${values.join(", ")}`);
  return found;
}

function nonNegativeInt(name: string, value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new Error(`--${name} must be a non-negative integer, got "${value}"`);
  return n;
}

/**
 * `aidc-operator emulator`: runs the in-memory service emulator until Ctrl-C or
 * SIGTERM, printing the base URL. The API key comes from --api-key or AIDC_API_KEY and
 * is never printed. The admin API is served under /_admin on the same port.
 */
export function registerEmulatorCommand(program: Command): void {
  const command = program
    .command("emulator")
    .description("run the in-memory emulator of the Compute and Storage Service API")
    .option("--port <port>", "port to listen on (0 picks a free one)", "8787")
    .option("--host <host>", "address to listen on", "127.0.0.1")
    .option("--api-key <key>", "bearer key to accept (default: env AIDC_API_KEY)")
    .option("--subscription-delay-ms <ms>", "how long subscriptions stay Pending", "2000")
    .option("--save-image-duration-ms <ms>", "how long saveImageStatus stays true", "3000")
    .option("--list-visibility-delay-ms <ms>", "delay before a new task or NAS is listed", "0")
    .option(
      "--detail-visibility-delay-ms <ms>",
      "how long after its order succeeds a new task or NAS answers its detail (before: unknown id)",
      "0",
    )
    .option("--nas-release-delay-ms <ms>", "how long a deleted NAS stays shown (Releasing)", "0")
    .option(
      "--repeat-delete-status <status>",
      "envelope status of a delete of a resource already being deleted (0 accepts it; 400, 409 or 500)",
      "0",
    )
    .option(
      "--failed-orders-leave-resources",
      "a task or NAS whose order fails after acceptance stays, half made (FAILED, Failed)",
    )
    .option("--lists-omit-description", "NAS, volume and file system lists leave out description")
    .option(
      "--lists-omit-env",
      "the task and template lists leave out env (a task's detail keeps it)",
    )
    .option("--http-status-mirrors-envelope", "answer error envelopes with the same HTTP status")
    .option(
      "--unknown-id-status <status>",
      "envelope status for an unknown id (404, 500, or 200: an empty object)",
      "404",
    )
    .option("--page-size-cap <n>", "largest page a list answers (0: no cap)", "0")
    .option(
      "--list-shrinks-after-first-page <n>",
      "pages after the first answered as if n records before them were deleted meanwhile",
      "0",
    )
    .option(
      "--list-grows-after-first-page <n>",
      "pages after the first answered as if n records were made meanwhile (first when newestFirst)",
      "0",
    )
    .option("--base-path <path>", "path prefix to serve the API under, e.g. /api/gw", "")
    .option(
      "--missing-operations <names>",
      "comma-separated endpoint names whose path answers a bare 404 (e.g. listPods,listNas)",
      "",
    )
    .option(
      "--subscription-result-shape <shape>",
      "shape of subscription results: canonical, integerStatus or renamedFields",
      "canonical",
    )
    .option(
      "--subscription-result-retention-ms <ms>",
      "how long a resolved subscription result is answered, then its key is unknown (0: for ever)",
      "0",
    )
    .option(
      "--nas-status-case <case>",
      "letter case of NAS status words: asShown (Running), upper or lower",
      "asShown",
    )
    .option(
      "--empty-list-data <shape>",
      "data of a list page without records: page, null or emptyObject",
      "page",
    )
    .option("--id-format <format>", "shape of new ids: default, numeric or uuid", "default")
    .option(
      "--subscription-key-format <format>",
      "the subscription key a create answers: string or number",
      "string",
    )
    .option(
      "--timestamp-format <format>",
      "how times are written: asShown, epochMillis or offset (+08:00)",
      "asShown",
    )
    .option(
      "--create-answer-shape <shape>",
      "a create's answer: key, or an object: subscriptionKey, keyObject, orderId, keyAndInstanceId, renamedField",
      "key",
    )
    .option(
      "--list-order <order>",
      "order of lists: oldestFirst, newestFirst or byName",
      "oldestFirst",
    )
    .option("--error-rate <fraction>", "share of requests answered with a 500 envelope", "0")
    .option("--latency-ms <ms>", "latency added to every request", "0")
    .option(
      "--keep-alive-timeout-ms <ms>",
      "close idle keep-alive connections after this long, announcing no Keep-Alive hint (default: Node's, 5 s announced)",
    )
    .option("--random-seed <n>", "seed of keys, addresses and fault draws", "1")
    .option(
      "--id-tag <tag>",
      'tag in every id made (task-<tag>-000001; default: random at start, "" for none)',
    )
    .option("--verbose", "log every request (never the key)");
  const defaults = kindSettingDefaults();
  // Each kind's own settings (src/emulator/kinds/<kind>.settings.ts), as --<name in kebab case>.
  for (const name of KIND_SETTING_NAMES) {
    command.option(
      `--${kindSettingFlag(name)} <n>`,
      kindSettingDescription(name),
      String(defaults[name]),
    );
  }
  command.action(async (flags: EmulatorFlags) => {
    const apiKey = flags.apiKey ?? process.env.AIDC_API_KEY;
    if (!apiKey) throw new Error("an API key is required: pass --api-key or set AIDC_API_KEY");
    const missingOperations = commaList(flags.missingOperations);
    const unknown = missingOperations.filter((n) => !isEndpointName(n));
    if (unknown.length > 0) {
      throw new Error(`--missing-operations: not endpoint names: ${unknown.join(", ")}`);
    }
    const { EMPTY_LIST_DATA, NAS_STATUS_CASES, SUBSCRIPTION_RESULT_SHAPES } = await import(
      "../emulator/state.js"
    );
    const shape = oneOf(
      "subscription-result-shape",
      SUBSCRIPTION_RESULT_SHAPES,
      flags.subscriptionResultShape,
    );
    const nasStatusCase = oneOf("nas-status-case", NAS_STATUS_CASES, flags.nasStatusCase);
    const emptyListData = oneOf("empty-list-data", EMPTY_LIST_DATA, flags.emptyListData);
    const { CREATE_ANSWER_SHAPES, ID_FORMATS, SUBSCRIPTION_KEY_FORMATS } = await import(
      "../emulator/id-formats.js"
    );
    const idFormat = oneOf("id-format", ID_FORMATS, flags.idFormat);
    const keyFormat = oneOf(
      "subscription-key-format",
      SUBSCRIPTION_KEY_FORMATS,
      flags.subscriptionKeyFormat,
    );
    const { TIMESTAMP_FORMATS } = await import("../emulator/time-formats.js");
    const timestampFormat = oneOf("timestamp-format", TIMESTAMP_FORMATS, flags.timestampFormat);
    const { LIST_ORDERS } = await import("../emulator/behaviour.js");
    const listOrder = oneOf("list-order", LIST_ORDERS, flags.listOrder);
    const errorRate = Number(flags.errorRate);
    if (!(errorRate >= 0 && errorRate <= 1)) {
      throw new Error(`--error-rate must be between 0 and 1, got "${flags.errorRate}"`);
    }
    const faults: FaultRuleInput[] = [];
    if (errorRate > 0) faults.push({ kind: "error", rate: errorRate });
    const latencyMs = nonNegativeInt("latency-ms", flags.latencyMs);
    if (latencyMs > 0) faults.push({ kind: "latency", latencyMs });
    // Loaded only here: `run` never needs the emulator.
    const { startEmulator } = await import("../emulator/server.js");
    const emulator = await startEmulator({
      apiKey,
      port: nonNegativeInt("port", flags.port),
      host: flags.host,
      subscriptionDelayMs: nonNegativeInt("subscription-delay-ms", flags.subscriptionDelayMs),
      saveImageDurationMs: nonNegativeInt("save-image-duration-ms", flags.saveImageDurationMs),
      listVisibilityDelayMs: nonNegativeInt(
        "list-visibility-delay-ms",
        flags.listVisibilityDelayMs,
      ),
      detailVisibilityDelayMs: nonNegativeInt(
        "detail-visibility-delay-ms",
        flags.detailVisibilityDelayMs,
      ),
      nasReleaseDelayMs: nonNegativeInt("nas-release-delay-ms", flags.nasReleaseDelayMs),
      repeatDeleteStatus: nonNegativeInt("repeat-delete-status", flags.repeatDeleteStatus),
      failedOrdersLeaveResources: flags.failedOrdersLeaveResources === true,
      listsOmitDescription: flags.listsOmitDescription === true,
      listsOmitEnv: flags.listsOmitEnv === true,
      ...Object.fromEntries(
        KIND_SETTING_NAMES.map((name) => [
          name,
          nonNegativeInt(kindSettingFlag(name), flags[name]),
        ]),
      ),
      httpStatusMirrorsEnvelope: flags.httpStatusMirrorsEnvelope === true,
      unknownIdStatus: nonNegativeInt("unknown-id-status", flags.unknownIdStatus),
      pageSizeCap: nonNegativeInt("page-size-cap", flags.pageSizeCap),
      listShrinksAfterFirstPage: nonNegativeInt(
        "list-shrinks-after-first-page",
        flags.listShrinksAfterFirstPage,
      ),
      listGrowsAfterFirstPage: nonNegativeInt(
        "list-grows-after-first-page",
        flags.listGrowsAfterFirstPage,
      ),
      basePath: flags.basePath,
      missingOperations,
      subscriptionResultShape: shape,
      nasStatusCase,
      emptyListData,
      idFormat,
      subscriptionKeyFormat: keyFormat,
      timestampFormat,
      createAnswerShape: oneOf(
        "create-answer-shape",
        CREATE_ANSWER_SHAPES,
        flags.createAnswerShape,
      ),
      listOrder,
      subscriptionResultRetentionMs: nonNegativeInt(
        "subscription-result-retention-ms",
        flags.subscriptionResultRetentionMs,
      ),
      randomSeed: nonNegativeInt("random-seed", flags.randomSeed),
      ...(flags.idTag === undefined ? {} : { idTag: flags.idTag }),
      ...(flags.keepAliveTimeoutMs === undefined
        ? {}
        : {
            keepAliveTimeoutMs: nonNegativeInt("keep-alive-timeout-ms", flags.keepAliveTimeoutMs),
          }),
      faults,
      ...(flags.verbose ? { logger: pino({ level: "debug" }, process.stderr) } : {}),
    });
    process.stdout.write(
      `service emulator at ${emulator.url} (admin API at ${emulator.url}/_admin)\n` +
        "Press Ctrl-C to stop.\n",
    );
    await waitForSignal();
    await emulator.stop();
  });
}
