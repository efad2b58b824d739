import { Type } from "typebox";
import { Agent, createScriptedModel, getModel, streamAnthropic, toolCall, type AgentTool } from "agentchart";

const params = Type.Object({ a: Type.Number(), b: Type.Number() });
const add: AgentTool<typeof params> = {
	name: "add",
	label: "Add",
	description: "Add two numbers",
	parameters: params,
	async execute(_id, { a, b }) {
		return { content: [{ type: "text", text: String(a + b) }], details: { sum: a + b } };
	},
};

// A scripted model: no key, no network. It calls the tool ("40" is validated into 40), then
// answers with the tool's result, which it reads from what the model is sent.
const scripted = createScriptedModel([
	{ content: [toolCall("add", { a: 2, b: "40" })] },
	(context) => {
		const result = context.messages.at(-1);
		const sum = result?.role === "toolResult" && result.content[0]?.type === "text" ? result.content[0].text : "?";
		return { content: `The answer is ${sum}.` };
	},
]);

const agent = new Agent({ initialState: { model: scripted.model, tools: [add] }, streamFn: scripted.streamFn });
agent.subscribe((event) => {
	if (event.type === "message_update" && event.assistantMessageEvent.type === "text_delta") process.stdout.write(event.assistantMessageEvent.delta);
	if (event.type === "agent_end") process.stdout.write("\n");
});
await agent.prompt("What is 2 + 40?"); // prints: The answer is 42.

// The same agent on a real model: set ANTHROPIC_API_KEY (or see docs/providers.md for the others).
if (process.env["ANTHROPIC_API_KEY"]) {
	agent.state.model = getModel("anthropic", "claude-haiku-4-5");
	agent.streamFn = streamAnthropic;
	await agent.prompt("And what is 19 + 23? Use the tool.");
}
// A failed call does not throw: prompt() resolves, and the error is here (as in pi).
if (agent.state.errorMessage !== undefined) console.error(`error: ${agent.state.errorMessage}`);
