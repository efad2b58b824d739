/**
 * The contenders, behind one small interface: agentchart's `Agent` (from `src/`, whatever
 * engine is there), pi-agent-core 0.73.1's `Agent`, and the floor (a raw `for await` over the
 * stream, with tools run inline): what any agent loop has to do at least.
 *
 * Each library is imported only when asked for ({@link loadBenchAgentFactory}), so a child
 * process that measures one of them holds that library's modules only.
 */
import type { AgentTool as PiAgentTool, StreamFn as PiStreamFn } from "@mariozechner/pi-agent-core";
import type { Model as PiModel } from "@mariozechner/pi-ai";
import { Type } from "typebox";
import type { AgentTool, AgentToolResult, AnyAgentTool, ToolExecutionMode } from "../../src/types/agent.js";
import type { AssistantMessage, Message, ToolResultMessage, UserMessage } from "../../src/types/messages.js";
import type { Model } from "../../src/types/model.js";
import type { StreamFn } from "../../src/types/stream.js";
import { loadAgentchart } from "./library.js";

/** Who is measured. */
export type ContenderName = "agentchart" | "pi" | "floor";

/** The two agent implementations (the floor has no Agent). */
export type AgentName = Exclude<ContenderName, "floor">;

/** The part of an AgentEvent the benchmarks look at; both libraries' events fit it. */
export interface BenchEvent {
	type: string;
	assistantMessageEvent?: { type: string };
}

/** What a benchmark needs from an agent of either library. */
export interface BenchAgent {
	subscribe(listener: (event: BenchEvent) => void): void;
	prompt(text: string): Promise<void>;
	readonly messageCount: number;
}

/** How to build an agent for a benchmark. */
export interface BenchAgentOptions {
	streamFn: StreamFn;
	model: Model;
	systemPrompt?: string;
	tools?: AnyAgentTool[];
	/** "streaming" exists in agentchart only; asking pi for it throws. */
	toolExecution?: ToolExecutionMode;
}

/** Builds agents of one library. */
export type BenchAgentFactory = (options: BenchAgentOptions) => BenchAgent;

/**
 * Imports one library and returns a factory for its agents.
 *
 * @example
 * const createPiAgent = await loadBenchAgentFactory("pi");
 * const agent = createPiAgent({ streamFn, model });
 * await agent.prompt("go");
 */
export async function loadBenchAgentFactory(name: AgentName): Promise<BenchAgentFactory> {
	if (name === "agentchart") {
		const { Agent } = await loadAgentchart();
		return (options) => {
			const agent = new Agent({
				initialState: { model: options.model, systemPrompt: options.systemPrompt ?? "", tools: options.tools ?? [] },
				streamFn: options.streamFn,
				toolExecution: options.toolExecution ?? "parallel",
			});
			return {
				subscribe: (listener) => void agent.subscribe(listener),
				prompt: (text) => agent.prompt(text),
				get messageCount() {
					return agent.state.messages.length;
				},
			};
		};
	}
	const { Agent: PiAgent } = await import("@mariozechner/pi-agent-core");
	return (options) => {
		if (options.toolExecution === "streaming") throw new Error("pi-agent-core 0.73.1 has no streaming tool execution");
		// Our stream function, model and tool types are structurally pi-ai's (that is the point of
		// the project), but TypeScript sees two declarations; the casts only bridge the names.
		const agent = new PiAgent({
			initialState: {
				model: options.model as unknown as PiModel<string>,
				systemPrompt: options.systemPrompt ?? "",
				tools: (options.tools ?? []) as unknown as PiAgentTool[],
			},
			streamFn: options.streamFn as unknown as PiStreamFn,
			toolExecution: options.toolExecution ?? "parallel",
		});
		return {
			subscribe: (listener) => void agent.subscribe(listener),
			prompt: (text) => agent.prompt(text),
			get messageCount() {
				return agent.state.messages.length;
			},
		};
	};
}

/**
 * Both libraries' factories, for benchmarks that compare them in one process.
 *
 * @example
 * const factories = await loadBenchAgentFactories();
 * const ours = factories.agentchart({ streamFn, model });
 */
export async function loadBenchAgentFactories(): Promise<Record<AgentName, BenchAgentFactory>> {
	return { agentchart: await loadBenchAgentFactory("agentchart"), pi: await loadBenchAgentFactory("pi") };
}

const stepParameters = Type.Object({ step: Type.Number() });

/**
 * A tool that answers at once (measures dispatch, not work). Create it once and share it:
 * a fresh schema object per agent would measure schema compilation, not the loop.
 *
 * @example
 * const tool = instantTool("noop");
 */
export function instantTool(name: string, run: () => Promise<void> | void = () => {}): AgentTool<typeof stepParameters> {
	return {
		name,
		label: name,
		description: `The ${name} benchmark tool: returns "ok" at once`,
		parameters: stepParameters,
		async execute() {
			await run();
			return { content: [{ type: "text", text: "ok" }], details: {} };
		},
	};
}

/** What the floor loop produced. */
export interface FloorResult {
	messages: Message[];
	textDeltas: number;
}

/**
 * The floor: the least work any agent loop does. Calls the stream function, iterates the
 * stream with `for await`, counts text deltas, runs the tool calls of each reply inline (in
 * parallel, no validation, no hooks), and repeats until a reply has no tool calls.
 *
 * @example
 * const { messages } = await runFloor({ streamFn, model, tools }, "go");
 */
export async function runFloor(options: BenchAgentOptions, text: string, onEvent?: (event: BenchEvent) => void): Promise<FloorResult> {
	const user: UserMessage = { role: "user", content: [{ type: "text", text }], timestamp: Date.now() };
	const messages: Message[] = [user];
	const tools = options.tools ?? [];
	let textDeltas = 0;
	for (;;) {
		const stream = await options.streamFn(options.model, { systemPrompt: options.systemPrompt ?? "", messages, tools }, {});
		for await (const event of stream) {
			if (event.type === "text_delta") textDeltas++;
			onEvent?.({ type: "message_update", assistantMessageEvent: event });
		}
		const reply: AssistantMessage = await stream.result();
		messages.push(reply);
		const calls = reply.content.filter((block) => block.type === "toolCall");
		if (calls.length === 0 || reply.stopReason === "error" || reply.stopReason === "aborted") break;
		const results = await Promise.all(
			calls.map(async (call): Promise<ToolResultMessage> => {
				const tool = tools.find((candidate) => candidate.name === call.name);
				const result: AgentToolResult<unknown> = tool
					? await tool.execute(call.id, call.arguments)
					: { content: [{ type: "text", text: `Tool ${call.name} not found` }], details: {} };
				return {
					role: "toolResult",
					toolCallId: call.id,
					toolName: call.name,
					content: result.content,
					details: result.details,
					isError: tool === undefined,
					timestamp: Date.now(),
				};
			}),
		);
		messages.push(...results);
		onEvent?.({ type: "turn_end" });
	}
	return { messages, textDeltas };
}
