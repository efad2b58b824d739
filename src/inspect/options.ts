/**
 * What `createAgentInspector` takes, checked when the inspector is made: a limit that is not a
 * number used to reach the ring buffer as is (the error named its internals), and one that made
 * no sense (`stringLength: -3`, `depth: -1`, `budget: "5"`) was taken, cutting every string of
 * every record to nothing without a word. A misspelt option (`capacty`) was ignored.
 */
import { shown, unknownKeys as unlistedKeys } from "../agent-input.js";
import type { AgentInspectorOptions } from "./inspector.js";
import type { AttachVisualizerOptions, VisualizerServerOptions } from "./visualizer-server.js";
import type { PreviewLimits } from "./summarize.js";

const OPTIONS: readonly string[] = ["capacity", "historySize", "historyBytes", "now", "schedule", "payload"] satisfies (keyof AgentInspectorOptions)[];
const LIMITS: readonly string[] = ["depth", "stringLength", "arrayItems", "objectKeys", "budget", "characters"] satisfies (keyof PreviewLimits)[];

function problem(path: string, why: string, got: unknown): TypeError {
	return new TypeError(`createAgentInspector(options): ${path} ${why}, got ${shown(got)}`);
}

function unknownKeys(value: object, known: readonly string[], path: string): void {
	const unknown = unlistedKeys(value, known);
	if (unknown !== undefined) throw new TypeError(`createAgentInspector(options): unknown ${path} ${unknown} (known: ${known.join(", ")})`);
}

/**
 * Throws a `TypeError` naming the option for anything the inspector could not work with.
 *
 * @example
 * checkInspectorOptions({ capacity: 1_000, payload: { stringLength: 20_000 } }); // fine
 * checkInspectorOptions({ capacity: "1000" }); // TypeError: createAgentInspector(options): capacity must be a whole number of at least 1, got "1000"
 */
export function checkInspectorOptions(options: unknown): asserts options is AgentInspectorOptions {
	if (options === undefined) return;
	if (typeof options !== "object" || options === null || Array.isArray(options)) throw problem("options", "must be an object of options", options);
	unknownKeys(options, OPTIONS, "option");
	const given = options as Record<string, unknown>;
	for (const name of ["capacity", "historySize"]) {
		const value = given[name];
		if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 1)) throw problem(name, "must be a whole number of at least 1", value);
	}
	const bytes = given["historyBytes"];
	if (bytes !== undefined && !(typeof bytes === "number" && bytes > 0 && !Number.isNaN(bytes))) throw problem("historyBytes", "must be a number of bytes above 0", bytes);
	for (const name of ["now", "schedule"]) {
		const value = given[name];
		if (value !== undefined && typeof value !== "function") throw problem(name, "must be a function", value);
	}
	const payload = given["payload"];
	if (payload === undefined) return;
	if (typeof payload !== "object" || payload === null || Array.isArray(payload)) throw problem("payload", "must be an object of preview limits", payload);
	unknownKeys(payload, LIMITS, "payload limit");
	for (const [name, value] of Object.entries(payload)) {
		// Infinity keeps everything: a whole tool result, however long.
		if (value !== undefined && !((Number.isInteger(value) && value >= 0) || value === Number.POSITIVE_INFINITY)) throw problem(`payload.${name}`, "must be a whole number of at least 0 (or Infinity)", value);
	}
}

const SERVER_OPTIONS: readonly string[] = ["port", "machine", "inspector", "replay"] satisfies (keyof VisualizerServerOptions)[];
const ATTACH_OPTIONS: readonly string[] = ["port", "record", "inspector"] satisfies (keyof AttachVisualizerOptions)[];

/**
 * The fields the visualizer's two entry points share, checked as `caller` names them. A port
 * given as text (`"4777"` from an environment variable) went to `listen` as the path of a local
 * socket: the server "started" at `http://127.0.0.1:undefined/`. A misspelt option was ignored.
 */
function checkServedOptions(options: unknown, caller: string, known: readonly string[]): Record<string, unknown> | undefined {
	const problem = (path: string, why: string, got: unknown) => new TypeError(`${caller}: ${path} ${why}, got ${shown(got)}`);
	if (options === undefined) return undefined;
	if (typeof options !== "object" || options === null || Array.isArray(options)) throw problem("options", "must be an object of options", options);
	const unknown = unlistedKeys(options, known);
	if (unknown !== undefined) throw new TypeError(`${caller}: unknown option ${unknown} (known: ${known.join(", ")})`);
	const { port, inspector } = options as Record<string, unknown>;
	if (port !== undefined && !(Number.isInteger(port) && (port as number) >= 0 && (port as number) <= 65_535)) throw problem("port", "must be a whole number from 0 to 65535 (0: a free one)", port);
	if (inspector !== undefined) {
		const shape = inspector as Partial<Record<"subscribe" | "history" | "flush" | "attach", unknown>> | null;
		if (typeof inspector !== "object" || shape === null || typeof shape.subscribe !== "function" || typeof shape.history !== "function" || typeof shape.flush !== "function" || typeof shape.attach !== "function") {
			throw problem("inspector", "must be an inspector from createAgentInspector()", inspector);
		}
	}
	return options as Record<string, unknown>;
}

/**
 * Throws a `TypeError` naming the option for anything the visualizer server could not serve:
 * a port that is not one, a misspelt option, a replay that is not a list of records (it served a
 * page that showed nothing), both an inspector and a replay.
 *
 * @example
 * checkVisualizerServerOptions({ port: 4777, inspector }); // fine
 * checkVisualizerServerOptions({ port: "4777" }); // TypeError: startVisualizerServer(options): port must be a whole number from 0 to 65535 (0: a free one), got "4777"
 */
export function checkVisualizerServerOptions(options: unknown): asserts options is VisualizerServerOptions {
	const caller = "startVisualizerServer(options)";
	const given = checkServedOptions(options, caller, SERVER_OPTIONS);
	if (!given) return;
	const { machine, inspector, replay } = given;
	if (machine !== undefined && !(typeof machine === "object" && machine !== null && "root" in machine && "id" in machine)) {
		throw new TypeError(`${caller}: machine must be a state machine (from XState's createMachine or setup().createMachine), got ${shown(machine)}`);
	}
	if (replay === undefined) return;
	if (!Array.isArray(replay)) throw new TypeError(`${caller}: replay must be the records of a recording (readRecording(path) gives them), got ${shown(replay)}`);
	const bad = replay.findIndex((record) => typeof record !== "object" || record === null || typeof (record as { type?: unknown }).type !== "string");
	if (bad >= 0) throw new TypeError(`${caller}: replay[${bad}] must be an inspection record ({ type, ... }), got ${shown(replay[bad])}`);
	if (inspector !== undefined) throw new TypeError(`${caller}: give inspector (live) or replay (a recording), not both`);
}

/**
 * Throws a `TypeError` naming the option for anything `attachVisualizer` could not use, before it
 * attaches anything.
 *
 * @example
 * checkAttachVisualizerOptions({ port: 4777, record: "run.ndjson" }); // fine
 * checkAttachVisualizerOptions({ record: true }); // TypeError: attachVisualizer(actor, options): record must be the path of a file to write, got true
 */
export function checkAttachVisualizerOptions(options: unknown): asserts options is AttachVisualizerOptions {
	const caller = "attachVisualizer(actor, options)";
	const record = checkServedOptions(options, caller, ATTACH_OPTIONS)?.["record"];
	if (record !== undefined && !(typeof record === "string" && record !== "")) throw new TypeError(`${caller}: record must be the path of a file to write, got ${shown(record)}`);
}
