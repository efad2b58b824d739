import { assertTranscript } from "../agent-input.js";
import type { AgentState, AgentThinkingLevel, AnyAgentTool } from "../types/agent.js";
import type { AgentMessage } from "../types/messages.js";
import type { Model } from "../types/model.js";

/**
 * The object `agent.state` returns (always the same one, as pi's): the agent's data when it is
 * idle, and its mirror of the run while one is in progress. `tools` and `messages` are copied on
 * assignment; the runtime fields are written by the agent only.
 *
 * A tool list is taken as given, as pi takes it (a pi app may store tool stubs such as
 * `{ name, description }`): its tools are checked when a run starts (see `assertValidTools`).
 * Messages are checked here, since a bad one would corrupt the transcript itself.
 */
export class MutableAgentState implements AgentState {
	// Assigned in the constructor, in pi's order: `tools` and `messages` are own enumerable
	// properties between them, as pi's object literal has them, so a spread, `Object.assign`,
	// `JSON.stringify` or `structuredClone` of the state copies the transcript as it does in pi.
	declare systemPrompt: string;
	declare model: Model;
	declare thinkingLevel: AgentThinkingLevel;
	declare tools: AnyAgentTool[];
	declare messages: AgentMessage[];
	declare isStreaming: boolean;
	declare streamingMessage: AgentMessage | undefined;
	declare pendingToolCalls: ReadonlySet<string>;
	declare errorMessage: string | undefined;
	#tools: AnyAgentTool[];
	#messages: AgentMessage[];
	/** Open calls beyond the first per id (a model may repeat an id in one reply); made only then. */
	#repeats: Map<string, number> | undefined;

	/** One getter and setter pair for every state, so every state has the same shape. */
	static readonly #lists: PropertyDescriptorMap = {
		tools: {
			enumerable: true,
			configurable: true,
			get(this: MutableAgentState): AnyAgentTool[] {
				return this.#tools;
			},
			set(this: MutableAgentState, value: AnyAgentTool[]) {
				if (!Array.isArray(value)) throw new TypeError(`state.tools: expected an array of tools, got ${value === null ? "null" : typeof value}`);
				this.#tools = [...value];
			},
		},
		messages: {
			enumerable: true,
			configurable: true,
			get(this: MutableAgentState): AgentMessage[] {
				return this.#messages;
			},
			set(this: MutableAgentState, value: AgentMessage[]) {
				assertTranscript(value, "state.messages");
				this.#messages = [...value];
			},
		},
	};

	constructor(systemPrompt: string, model: Model, thinkingLevel: AgentThinkingLevel, tools: AnyAgentTool[], messages: AgentMessage[]) {
		this.#tools = tools;
		this.#messages = messages;
		this.systemPrompt = systemPrompt;
		this.model = model;
		this.thinkingLevel = thinkingLevel;
		Object.defineProperties(this, MutableAgentState.#lists);
		this.isStreaming = false;
		this.streamingMessage = undefined;
		this.pendingToolCalls = EMPTY;
		this.errorMessage = undefined;
	}

	/** A tool call started: its id is pending (a new set, as pi's, so a listener's copy stays as it was). */
	callStarted(id: string): void {
		if (this.pendingToolCalls.has(id)) {
			this.#repeats ??= new Map();
			this.#repeats.set(id, (this.#repeats.get(id) ?? 0) + 1);
			return;
		}
		this.pendingToolCalls = new Set(this.pendingToolCalls).add(id);
	}

	/** A tool call ended: its id stays pending while another call with that id still runs (pi drops it at the first end). */
	callEnded(id: string): void {
		const repeats = this.#repeats?.get(id) ?? 0;
		if (repeats > 0) {
			this.#repeats?.set(id, repeats - 1);
			return;
		}
		const pending = new Set(this.pendingToolCalls);
		pending.delete(id);
		this.pendingToolCalls = pending;
	}

	/** The run ended: nothing streams, no tool call is pending. */
	settle(): void {
		this.isStreaming = false;
		this.streamingMessage = undefined;
		this.pendingToolCalls = EMPTY;
		this.#repeats = undefined;
	}
}

/** Shared by idle agents: a new set is made only when a tool call starts. */
const EMPTY: ReadonlySet<string> = new Set<string>();
