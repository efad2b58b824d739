/**
 * `npm start`: one agent run printed in the terminal. Scripted model by default (no key, no
 * network); Claude when ANTHROPIC_API_KEY is set (`--model <id>` to choose). `--inspect`
 * attaches the visualizer and prints its URL.
 */
import { Agent } from "../agent.js";
import { createScriptedModel, text, thinking, toolCall } from "../providers/scripted.js";
import { streamAnthropic } from "../providers/anthropic.js";
import type { AgentEvent } from "../types/agent.js";
import type { Context } from "../types/model.js";
import { selectDemoModel } from "./anthropic-select.js";
import { clockTool, weatherTool } from "./tools.js";

const QUESTION = "What's the weather in Paris right now, and what time is it there?";
const useColor = process.stdout.isTTY === true;
const paint = (code: number, value: string) => (useColor ? `\x1b[${code}m${value}\x1b[0m` : value);
const dim = (value: string) => paint(2, value);
const bold = (value: string) => paint(1, value);
const cyan = (value: string) => paint(36, value);

function resultText(context: Context): string[] {
	return context.messages
		.filter((message) => message.role === "toolResult")
		.map((message) => message.content.map((block) => (block.type === "text" ? block.text : "")).join(""));
}

function scriptedAgent(): Agent {
	const scripted = createScriptedModel(
		[
			{
				content: [
					thinking("Two independent lookups: weather and local time. Run them in parallel."),
					text("Let me check both at once."),
					toolCall("get_weather", { city: "Paris" }),
					toolCall("get_time", { city: "Paris" }),
				],
			},
			(context) => ({ content: `Here is what I found:\n${resultText(context).map((line) => `- ${line}`).join("\n")}` }),
		],
		{ chunkSize: 6, delayMs: 15 },
	);
	return new Agent({
		initialState: { model: scripted.model, systemPrompt: "You are a concise assistant.", tools: [weatherTool, clockTool] },
		streamFn: scripted.streamFn,
	});
}

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

/** Waits for Enter on a terminal; without one (CI, pipes), waits `fallbackMs` instead. */
async function waitForEnter(prompt: string, fallbackMs: number): Promise<void> {
	if (!process.stdin.isTTY) {
		await new Promise((resolve) => setTimeout(resolve, fallbackMs));
		return;
	}
	console.log(dim(prompt));
	await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
	process.stdin.pause();
}

async function main(): Promise<void> {
	const argv = process.argv.slice(2);
	const choice = selectDemoModel(argv, process.env);
	const agent =
		choice.kind === "anthropic"
			? new Agent({
					initialState: { model: choice.model, systemPrompt: "You are a concise assistant.", tools: [weatherTool, clockTool] },
					streamFn: streamAnthropic,
					getApiKey: () => choice.apiKey,
				})
			: scriptedAgent();
	console.log(dim(choice.kind === "anthropic" ? `model: ${choice.model.id} (Anthropic)` : "model: scripted (no API key needed)"));

	let closeVisualizer: (() => Promise<void>) | undefined;
	if (argv.includes("--inspect")) {
		const { attachVisualizer } = await import("../inspect/visualizer-server.js");
		const visualizer = await attachVisualizer(agent.actor);
		closeVisualizer = visualizer.close;
		console.log(`visualizer: ${visualizer.url}`);
		await waitForEnter("open it, then press Enter to start the run", 1500);
	}

	printEvents(agent);
	await agent.prompt(QUESTION);
	if (agent.state.errorMessage) {
		console.error(`error: ${agent.state.errorMessage}`);
		process.exitCode = 1;
	}
	agent.dispose();
	if (closeVisualizer) {
		await waitForEnter("visualizer still open; press Enter to exit", 0);
		await closeVisualizer();
	}
}

main().catch((error: unknown) => {
	console.error(error instanceof Error ? error.message : error);
	process.exitCode = 1;
});
