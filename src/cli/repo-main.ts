#!/usr/bin/env node
/**
 * `aidc-operator` from a checkout of the repository (`npm run emulator`, `npm run dev`,
 * `npm run controlplane`): the production commands (program.ts) and the development
 * ones: the service emulator, the local control plane and the playground. The image
 * does not carry them (main.ts is its entry).
 */
import { registerControlPlaneCommand } from "./controlplane.js";
import { registerDevCommand } from "./dev-command.js";
import { registerEmulatorCommand } from "./emulator.js";
import { operatorProgram, runProgram } from "./program.js";

const program = operatorProgram();
registerControlPlaneCommand(program);
registerDevCommand(program);
registerEmulatorCommand(program);
runProgram(program);
