import { AssistantMessageEventStream } from "../providers/event-stream.js";
import { createAssistantMessage } from "../providers/assistant-message.js";
import type { Model } from "../types/model.js";
import type { StreamFn } from "../types/stream.js";
import { defaultConvertToLlm } from "./run-helpers.js";
import type { AgentMachineConfig } from "./types.js";
import { loopConfigData } from "../durable/snapshot.js";
import { isMissingPeer, loadOptionalPeer, peerInstallCommand, type OptionalPeerUse } from "../util/optional-peer.js";

/**
 * The placeholder model of a new agent (pi uses the same "unknown" model).
 *
 * @example
 * defaultModel().id; // "unknown"
 */
export function defaultModel(): Model {
	return {
		id: "unknown",
		name: "unknown",
		api: "unknown",
		provider: "unknown",
		baseUrl: "",
		reasoning: false,
		input: [],
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
		contextWindow: 0,
		maxTokens: 0,
	};
}

function errorStream(model: Model, errorMessage: string): AssistantMessageEventStream {
	const stream = new AssistantMessageEventStream();
	stream.push({ type: "error", reason: "error", error: createAssistantMessage(model, { stopReason: "error", errorMessage }) });
	return stream;
}

/**
 * What the default stream function loads: pi-ai's `streamSimple`, if that package is installed.
 *
 * @example
 * const load: PiAiLoader = async () => ({ streamSimple: streamAnthropic }); // no pi-ai: Anthropic only
 * const streamFn = createDefaultStreamFn(load);
 */
export type PiAiLoader = () => Promise<{ streamSimple: StreamFn }>;

// pi-ai is an optional peer dependency: imported by name at run time, so nothing needs it installed.
const loadPiAi: PiAiLoader = () => import(["@mariozechner", "pi-ai"].join("/")) as Promise<{ streamSimple: StreamFn }>;

/** Who needs pi-ai, for the message of a failed load. */
const piAiPeer: OptionalPeerUse = { feature: "the default stream function of Agent (agentchart)", peer: "@mariozechner/pi-ai" };

function noStreamFnMessage(model: Model, loadError: Error): string {
	const advice = `No stream function for model "${model.id}" (api "${model.api}"): pass streamFn (for example streamAnthropic, streamOpenAICompletions or a pi-ai stream function) to the Agent`;
	// Installed but not usable (another major version, a broken install): "install it" alone would not help.
	if (!isMissingPeer(loadError.cause, piAiPeer.peer)) return `${advice}; pi-ai's providers (the default) are not available: ${loadError.message}`;
	return `${advice}, or install @mariozechner/pi-ai to use its providers (\`${peerInstallCommand(piAiPeer)}\`).`;
}

/**
 * The stream function of an agent given none, as in pi: pi-ai's `streamSimple` (its provider
 * registry) when `@mariozechner/pi-ai` is installed, loaded on the first call; otherwise an
 * error reply that says what to do, instead of a silent hang or a throw.
 *
 * @example
 * const agent = new Agent({ initialState: { model } }); // pi-ai's providers when installed
 */
export function createDefaultStreamFn(load: PiAiLoader = loadPiAi): StreamFn {
	let loaded: Promise<StreamFn | Error> | undefined;
	return async (model, context, options) => {
		const loading = (loaded ??= loadOptionalPeer(piAiPeer, load, ["streamSimple"]).then(
			(module) => module.streamSimple,
			(error: unknown) => (error instanceof Error ? error : new Error(String(error))),
		));
		const streamSimple = await loading;
		if (typeof streamSimple === "function") return streamSimple(model, context, options);
		// Not kept: once the package is installed (the reply says how), the next call loads it, without a restart.
		if (loaded === loading) loaded = undefined;
		return errorStream(model, noStreamFnMessage(model, streamSimple));
	};
}

/**
 * The default stream function (see {@link createDefaultStreamFn}).
 *
 * @example
 * const agent = new Agent({ initialState: { model }, streamFn: defaultStreamFn }); // the same as leaving streamFn out
 */
export const defaultStreamFn: StreamFn = createDefaultStreamFn();

/**
 * The loop configuration defaults.
 *
 * @example
 * defaultLoopConfig().toolTimeoutMs; // 180000
 */
export function defaultLoopConfig(): AgentMachineConfig {
	return new LoopConfig();
}


/**
 * The defaults, as a class: a run's configuration is one of these with the run's settings merged
 * onto it. Every key is here, the optional ones as undefined: an object V8 has to add properties to after a copy is an
 * order of magnitude slower to build.
 */
class LoopConfig implements AgentMachineConfig {
	streamFn: AgentMachineConfig["streamFn"] = defaultStreamFn;
	convertToLlm: AgentMachineConfig["convertToLlm"] = defaultConvertToLlm;
	transformContext: AgentMachineConfig["transformContext"] = undefined;
	getApiKey: AgentMachineConfig["getApiKey"] = undefined;
	beforeToolCall: AgentMachineConfig["beforeToolCall"] = undefined;
	afterToolCall: AgentMachineConfig["afterToolCall"] = undefined;
	shouldStopAfterTurn: AgentMachineConfig["shouldStopAfterTurn"] = undefined;
	getSteeringMessages: AgentMachineConfig["getSteeringMessages"] = undefined;
	getFollowUpMessages: AgentMachineConfig["getFollowUpMessages"] = undefined;
	toolExecution: AgentMachineConfig["toolExecution"] = "parallel";
	toolTimeoutMs = 180_000;
	abortGraceMs = 2_000;
	streamIdleTimeoutMs = 120_000;
	toolAbortGraceMs = 5_000;
	// An empty literal: V8 tracks no allocation site for `{}`.
	streamOptions: AgentMachineConfig["streamOptions"] = {};
	compaction: AgentMachineConfig["compaction"] = undefined;
	outputLimitRecovery: AgentMachineConfig["outputLimitRecovery"] = undefined;
	deliveryPending: AgentMachineConfig["deliveryPending"] = undefined;
	deltaSink: AgentMachineConfig["deltaSink"] = undefined;
	approvalTimeoutMs: AgentMachineConfig["approvalTimeoutMs"] = undefined;
	checkpoints: AgentMachineConfig["checkpoints"] = undefined;
	journal: AgentMachineConfig["journal"] = undefined;

	/** The settings, as data (a persisted snapshot of the machine keeps these: see `durable/snapshot.ts`). */
	toJSON(): Record<string, unknown> {
		return loopConfigData(this);
	}
}

const LOOP_DEFAULTS = new LoopConfig();

/** The settings that have a default other than undefined. */
const DEFAULTED_KEYS = (Object.keys(LOOP_DEFAULTS) as (keyof AgentMachineConfig)[]).filter((key) => LOOP_DEFAULTS[key] !== undefined);

/**
 * The loop's settings: the parts merged in order onto the defaults, a setting given as
 * undefined taking its default (`{ toolTimeoutMs: undefined }` is 180000, not "no timeout", and
 * `{ streamFn: undefined }` the default stream function, not a call of undefined). A hook given
 * as undefined is unset, which is its default.
 *
 * @example
 * loopConfig(context.config, { toolTimeoutMs: undefined }).toolTimeoutMs; // 180000
 */
export function loopConfig(...parts: (Partial<AgentMachineConfig> | undefined)[]): AgentMachineConfig {
	const config: AgentMachineConfig = Object.assign(new LoopConfig(), ...parts);
	let defaults: LoopConfig | undefined;
	for (const key of DEFAULTED_KEYS) if (config[key] === undefined) takeDefault(config, (defaults ??= new LoopConfig()), key);
	return config;
}

function takeDefault<K extends keyof AgentMachineConfig>(config: AgentMachineConfig, defaults: LoopConfig, key: K): void {
	config[key] = defaults[key];
}
