/**
 * An agent on a model you run yourself, through any OpenAI-compatible server: Ollama, vLLM,
 * llama.cpp's llama-server, LM Studio (or a hosted gateway with its key in the environment).
 *
 *   npm install agentchart openai
 *   OPENAI_BASE_URL=http://127.0.0.1:11434/v1 OPENAI_MODEL=qwen3:8b npx tsx examples/local-model.ts
 *
 * Defaults: a local Ollama (http://127.0.0.1:11434/v1) and qwen3:8b.
 */
import { Type } from "typebox";
import { Agent, createOpenAICompatibleModel, streamOpenAICompletions, type AgentTool } from "agentchart";

const params = Type.Object({ city: Type.String() });
const weather: AgentTool<typeof params> = {
	name: "get_weather",
	label: "Weather",
	description: "Current weather for a city",
	parameters: params,
	async execute(_id, { city }) {
		return { content: [{ type: "text", text: `${city}: 18°C, clear` }], details: { city } };
	},
};

const model = createOpenAICompatibleModel({
	baseUrl: process.env["OPENAI_BASE_URL"] ?? "http://127.0.0.1:11434/v1",
	id: process.env["OPENAI_MODEL"] ?? "qwen3:8b",
	contextWindow: 32_768, // what the server runs with (Ollama: num_ctx)
});
const agent = new Agent({
	initialState: { model, systemPrompt: "Answer weather questions briefly.", tools: [weather] },
	streamFn: streamOpenAICompletions,
});
agent.subscribe((event) => {
	if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") process.stdout.write(event.assistantMessageEvent.delta);
	if (event.type === "tool_execution_end") console.log(`[${event.toolName}: ${event.isError ? "failed" : "ok"}]`);
});
await agent.prompt(process.argv[2] ?? "What's the weather in Zürich?");
console.log();
if (agent.state.errorMessage !== undefined) {
	console.error(`error: ${agent.state.errorMessage}`);
	process.exitCode = 1;
}
