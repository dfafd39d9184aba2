import { ConfigError } from "../config/load.js";
import type { OperatorConfig } from "../config/schema.js";
import type { ControllerDefinition } from "../runtime/controller.js";

/**
 * The operator config's settings by name (`concurrency` by controller, `pollIntervalMs`
 * by kind) that name no controller or polled kind of `controllers` (every controller the
 * operator can run): such an entry would change nothing, silently
 * (`concurrency: { NasVolume: 4 }`, where the controller is `nasvolume`). Throws a
 * ConfigError naming each, with the names there are.
 */
export function checkNamedSettings(
  config: OperatorConfig,
  controllers: readonly ControllerDefinition[],
): void {
  const names = [...new Set(controllers.map((c) => c.name))];
  const kinds = [...new Set(controllers.map((c) => c.primary.kind))];
  const unknown = (map: Record<string, number>, known: string[]) =>
    Object.keys(map).filter((k) => k !== "default" && !known.includes(k));
  const wrong = [
    ...unknown(config.concurrency, names).map(
      (k) => `concurrency.${k}: no controller of that name (${names.join(", ")})`,
    ),
    ...unknown(config.pollIntervalMs, kinds).map(
      (k) => `pollIntervalMs.${k}: no kind polled by that name (${kinds.join(", ")})`,
    ),
  ];
  if (wrong.length > 0) throw new ConfigError(`invalid operator config: ${wrong.join("; ")}`);
}
