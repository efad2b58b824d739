/**
 * The demo's agent without a key: a scripted model that answers the question it was asked
 * (`--prompt`), so the run on screen is about what the user typed. It cannot understand the
 * question, so it says so and shows what a run looks like: reasoning, two tool calls in
 * parallel, and an answer built from their results.
 */
import { Agent } from "../agent.js";
import { createScriptedModel, text, thinking, toolCall } from "../providers/scripted.js";
import type { Context } from "../types/model.js";
import { clockTool, weatherTool } from "./tools.js";

/** The question `npm start` asks when no `--prompt` is given. */
export const defaultDemoQuestion = "What's the weather in Paris right now, and what time is it there?";

/** Cities the demo's tools have data for. */
const KNOWN_CITIES = ["Paris", "Tokyo"];

/** The city a question names (the first the tools know), else Paris. */
function cityIn(question: string): string {
	const lower = question.toLowerCase();
	return KNOWN_CITIES.find((city) => lower.includes(city.toLowerCase())) ?? "Paris";
}

function resultLines(context: Context): string[] {
	return context.messages
		.filter((message) => message.role === "toolResult")
		.map((message) => message.content.map((block) => (block.type === "text" ? block.text : "")).join(""));
}

/**
 * A demo agent on the scripted model, answering `question`.
 *
 * @example
 * const agent = scriptedDemoAgent("hello there");
 * await agent.prompt("hello there");
 */
export function scriptedDemoAgent(question: string): Agent {
	const city = cityIn(question);
	const asksForTheDemo = question === defaultDemoQuestion;
	const scripted = createScriptedModel(
		[
			{
				content: [
					thinking(
						asksForTheDemo
							? "Two independent lookups: weather and local time. Run them in parallel."
							: `I am a scripted model: I cannot understand "${question}", so I show what a run looks like. Two lookups for ${city}, in parallel.`,
					),
					text(asksForTheDemo ? "Let me check both at once." : `You asked: "${question}". A scripted model cannot answer that, but it can call tools: here is ${city}.`),
					toolCall("get_weather", { city }),
					toolCall("get_time", { city }),
				],
			},
			(context) => ({ content: `Here is what I found:\n${resultLines(context).map((line) => `- ${line}`).join("\n")}` }),
		],
		{ chunkSize: 6, delayMs: 15 },
	);
	return new Agent({
		initialState: { model: scripted.model, systemPrompt: "You are a concise assistant.", tools: [weatherTool, clockTool] },
		streamFn: scripted.streamFn,
	});
}
