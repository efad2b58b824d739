/**
 * `npm start`: one agent run printed in the terminal. Scripted model by default (no key, no
 * network); Claude when ANTHROPIC_API_KEY is set; any OpenAI-compatible server with
 * `--provider openai-compatible`. `--inspect` serves the visualizer until Ctrl-C. `--help`
 * lists the flags.
 */
import { Agent } from "../agent.js";
import { streamAnthropic } from "../providers/anthropic.js";
import type { AgentEvent } from "../types/agent.js";
import { selectDemoModel } from "./anthropic-select.js";
import { DEMO_USAGE, type DemoArgs, DemoUsageError, parseDemoArgs } from "./cli-args.js";
import { selectOpenAICompatibleModel } from "./openai-select.js";
import { defaultDemoQuestion, scriptedDemoAgent } from "./scripted-agent.js";
import { clockTool, weatherTool } from "./tools.js";

const useColor = process.stdout.isTTY === true;
const paint = (code: number, value: string) => (useColor ? `\x1b[${code}m${value}\x1b[0m` : value);
const dim = (value: string) => paint(2, value);
const bold = (value: string) => paint(1, value);
const cyan = (value: string) => paint(36, value);

function printEvents(agent: Agent): void {
	let lastKind: "text" | "thinking" | undefined;
	agent.subscribe((event: AgentEvent) => {
		switch (event.type) {
			case "turn_start":
				console.log(dim("── turn ──"));
				break;
			case "message_start":
				if ((event.message as { role: string }).role === "user") {
					const content = (event.message as { content: unknown }).content;
					const textContent = typeof content === "string" ? content : JSON.stringify(content);
					console.log(`${bold("you")}  ${Array.isArray(content) ? (content[0] as { text: string }).text : textContent}`);
				}
				break;
			case "message_update": {
				const update = event.assistantMessageEvent;
				if (update.type === "thinking_delta") {
					if (lastKind !== "thinking") process.stdout.write(`${bold("agent")} ${dim("(thinking) ")}`);
					lastKind = "thinking";
					process.stdout.write(dim(update.delta));
				} else if (update.type === "text_delta") {
					if (lastKind !== "text") process.stdout.write(`${lastKind ? "\n" : ""}${bold("agent")} `);
					lastKind = "text";
					process.stdout.write(update.delta);
				}
				break;
			}
			case "message_end":
				if (lastKind) process.stdout.write("\n");
				lastKind = undefined;
				break;
			case "tool_execution_start":
				console.log(cyan(`  ▶ ${event.toolName}(${JSON.stringify(event.args)})`));
				break;
			case "tool_execution_end": {
				const result = event.result as { content?: { type: string; text?: string }[] };
				const output = result.content?.map((block) => block.text ?? "").join("") ?? "";
				console.log(cyan(`  ${event.isError ? "✖" : "✔"} ${event.toolName} → ${output}`));
				break;
			}
			case "agent_end":
				console.log(dim(`── done: ${event.messages.length} new messages ──`));
				break;
		}
	});
}

/** Waits for Enter on a terminal or for `page`, whichever comes first (stdin is released afterwards). */
async function waitForEnterOrPage(prompt: string, page: Promise<void>): Promise<void> {
	console.log(dim(prompt));
	let onData = () => {};
	const enter = new Promise<void>((resolve) => (onData = () => resolve()));
	process.stdin.once("data", onData);
	await Promise.race([enter, page]);
	process.stdin.off("data", onData);
	process.stdin.pause();
}

/** Resolves on Ctrl-C (SIGINT) or SIGTERM, so the process can close what it opened first. */
function untilInterrupted(): Promise<void> {
	return new Promise((resolve) => {
		process.once("SIGINT", () => resolve());
		process.once("SIGTERM", () => resolve());
	});
}

/** The agent the command line asks for. */
function createDemoAgent(args: DemoArgs, question: string): { agent: Agent; label: string } {
	const options = { systemPrompt: "You are a concise assistant.", tools: [weatherTool, clockTool] };
	if (args.provider === "openai-compatible") {
		if (!args.baseUrl) throw new DemoUsageError("--provider openai-compatible needs --base-url (e.g. http://127.0.0.1:11434/v1)");
		if (!args.model) throw new DemoUsageError("--provider openai-compatible needs --model (the model name the server knows)");
		const { model, streamFn } = selectOpenAICompatibleModel({ baseUrl: args.baseUrl, model: args.model, apiKey: args.apiKey });
		return { agent: new Agent({ initialState: { model, ...options }, streamFn }), label: `${model.id} at ${model.baseUrl} (OpenAI-compatible)` };
	}
	if (args.baseUrl !== undefined || args.apiKey !== undefined) throw new DemoUsageError("--base-url and --api-key apply to --provider openai-compatible");
	const choice = selectDemoModel(args, process.env);
	if (choice.kind === "scripted") return { agent: scriptedDemoAgent(question), label: "scripted (no API key needed)" };
	const agent = new Agent({ initialState: { model: choice.model, ...options }, streamFn: streamAnthropic, getApiKey: () => choice.apiKey });
	return { agent, label: `${choice.model.id} (Anthropic)` };
}

async function main(): Promise<void> {
	// `npm start | head` closes the pipe early: that is the reader's choice, not a crash.
	process.stdout.on("error", (error: NodeJS.ErrnoException) => {
		if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
		throw error;
	});
	const args = parseDemoArgs(process.argv.slice(2));
	if (args.help) {
		console.log(DEMO_USAGE);
		return;
	}
	const question = args.prompt ?? defaultDemoQuestion;
	const { agent, label } = createDemoAgent(args, question);
	console.log(dim(`model: ${label}`));

	let closeVisualizer: (() => Promise<void>) | undefined;
	let visualizerUrl = "";
	if (args.inspect) {
		const { attachVisualizer } = await import("../inspect/visualizer-server.js");
		const visualizer = await attachVisualizer(agent.actor);
		closeVisualizer = visualizer.close;
		visualizerUrl = visualizer.url;
		console.log(`visualizer: ${visualizer.url}`);
		// A page opened later still receives the whole run (the inspector keeps its history);
		// waiting lets the page watch it happen. --wait-for-page waits for the page alone.
		if (args.waitForPage) {
			console.log(dim("waiting for the page to connect…"));
			await visualizer.waitForPage();
		} else if (process.stdin.isTTY) {
			await waitForEnterOrPage("open it (the run starts when it connects), or press Enter to start the run", visualizer.waitForPage());
		}
	}

	printEvents(agent);
	await agent.prompt(question);
	if (agent.state.errorMessage) {
		console.error(`error: ${agent.state.errorMessage}`);
		process.exitCode = 1;
	}
	agent.dispose();
	if (closeVisualizer) {
		// Listen before saying so: a Ctrl-C typed the moment the line appears must not find the
		// default handler (which would kill the process with status 130 and skip the close).
		const interrupted = untilInterrupted();
		console.log(dim(`the visualizer keeps the finished run at ${visualizerUrl} (replay it with its seek bar); press Ctrl-C to exit`));
		await interrupted;
		await closeVisualizer();
	}
}

main().catch((error: unknown) => {
	if (error instanceof DemoUsageError) {
		console.error(`${error.message}\n\n${DEMO_USAGE}`);
		process.exitCode = 2;
		return;
	}
	console.error(error instanceof Error ? error.message : error);
	process.exitCode = 1;
});
