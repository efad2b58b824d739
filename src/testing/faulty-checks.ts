/**
 * What `createFaultyModel` takes beside the scripted model's options, checked when it is given: a
 * fault of unknown kind (`"timeout"`) used to end its reply with no `done` and no `error`, and a
 * probability of 30 (for 30 %) broke every call, without a word.
 */
import { shown } from "../agent-input.js";
import { OPTION_FIELDS, refuseUnknownFields } from "../providers/scripted-checks.js";
import { isRecord } from "../util/json-values.js";
import type { Fault, FaultKind, FaultyModelOptions } from "./faulty-model.js";

/** Every kind of fault, in the order the random draw picks from. */
export const ALL_FAULTS: readonly FaultKind[] = ["stall", "reset", "error", "output-limit", "overflow"];
const FAULT_FIELDS: readonly string[] = ["kind", "afterDeltas", "message"] satisfies (keyof Fault)[];
/** Its own options first, then the scripted model's, which it passes on. */
const FAULTY_OPTION_FIELDS: readonly string[] = ["faults", "random", ...OPTION_FIELDS] satisfies (keyof FaultyModelOptions)[];
const RANDOM_FIELDS: readonly string[] = ["seed", "probability", "kinds", "maxDeltas"] satisfies (keyof NonNullable<FaultyModelOptions["random"]>)[];

function problem(where: string, why: string, got: unknown): TypeError {
	return new TypeError(`createFaultyModel: ${where} ${why}, got ${shown(got)}`);
}

function checkKind(kind: unknown, where: string): void {
	if (!ALL_FAULTS.includes(kind as FaultKind)) throw problem(where, `must be one of ${ALL_FAULTS.map((name) => `"${name}"`).join(", ")}`, kind);
}

function checkWhole(value: unknown, where: string, what: string): void {
	if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0)) throw problem(where, `must be a whole number of ${what}, 0 or more`, value);
}

/**
 * Throws a `TypeError` naming the fault for one the faulty model could not inject. Also used on
 * what a `faults` function returns, when it is called.
 *
 * @example
 * checkFault({ kind: "reset", afterDeltas: 2 }, "faults[0]"); // fine
 * checkFault({ kind: "timeout" }, "faults[0]"); // TypeError: createFaultyModel: faults[0].kind must be one of "stall", ...
 */
export function checkFault(fault: unknown, where: string): asserts fault is Fault {
	if (!isRecord(fault)) throw problem(where, "must be a fault ({ kind, afterDeltas?, message? })", fault);
	refuseUnknownFields(fault, FAULT_FIELDS, where, "createFaultyModel");
	checkKind(fault["kind"], `${where}.kind`);
	checkWhole(fault["afterDeltas"], `${where}.afterDeltas`, "deltas");
	if (fault["message"] !== undefined && typeof fault["message"] !== "string") throw problem(`${where}.message`, "must be a string", fault["message"]);
}

/**
 * Throws a `TypeError` naming the option for `faults` or `random` the faulty model could not use.
 *
 * @example
 * checkFaultOptions({ random: { seed: 7, probability: 0.5 } }); // fine (the scripted model checks the other options)
 * checkFaultOptions({ random: { seed: 7, probability: 50 } }); // TypeError: createFaultyModel: random.probability must be a number from 0 to 1, got 50
 */
export function checkFaultOptions(options: unknown): asserts options is FaultyModelOptions {
	if (!isRecord(options)) throw problem("options", "must be an object of options", options);
	// Checked here, not by the scripted model: its error would name createScriptedModel and leave `faults` and `random` out of the list.
	refuseUnknownFields(options, FAULTY_OPTION_FIELDS, "options", "createFaultyModel");
	const { faults, random } = options;
	if (faults !== undefined && typeof faults !== "function") {
		if (!isRecord(faults)) throw problem("faults", "must be an object of faults by call index (0 = the first call) or a function of the call index", faults);
		for (const [call, fault] of Object.entries(faults)) {
			if (!/^(0|[1-9]\d*)$/.test(call)) throw problem("faults", `keys must be call indexes (0, 1, ...), not ${JSON.stringify(call)}`, faults);
			checkFault(fault, `faults[${call}]`);
		}
	}
	if (random === undefined) return;
	if (!isRecord(random)) throw problem("random", "must be an object ({ seed, probability?, kinds?, maxDeltas? })", random);
	refuseUnknownFields(random, RANDOM_FIELDS, "random", "createFaultyModel");
	// The generator takes the seed's whole 32-bit part: 1.5 would replay seed 1's faults.
	if (!(typeof random["seed"] === "number" && Number.isInteger(random["seed"]))) throw problem("random.seed", "must be an integer", random["seed"]);
	const probability = random["probability"];
	if (probability !== undefined && !(typeof probability === "number" && probability >= 0 && probability <= 1)) throw problem("random.probability", "must be a number from 0 to 1", probability);
	const kinds = random["kinds"];
	if (kinds !== undefined) {
		if (!Array.isArray(kinds)) throw problem("random.kinds", "must be an array of fault kinds", kinds);
		// Read as "every kind" it would inject what the caller left out; leave it out for every kind.
		if (kinds.length === 0) throw problem("random.kinds", "must name at least one fault kind (leave it out for all of them)", kinds);
		kinds.forEach((kind, index) => checkKind(kind, `random.kinds[${index}]`));
	}
	checkWhole(random["maxDeltas"], "random.maxDeltas", "deltas");
}
