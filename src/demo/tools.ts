import { Type } from "typebox";
import type { AgentTool } from "../types/agent.js";
import { ownValue } from "../util/own-keys.js";

const cityParams = Type.Object({ city: Type.String({ description: "City name" }) });

// Fixed data: the demo must print the same thing on every machine, without a network.
const WEATHER: Record<string, string> = { paris: "14 °C, light rain", tokyo: "22 °C, clear" };
const UTC_OFFSET: Record<string, number> = { paris: 1, tokyo: 9 };

function pause(ms: number, signal?: AbortSignal): Promise<void> {
	return new Promise((resolve, reject) => {
		const timer = setTimeout(resolve, ms);
		signal?.addEventListener("abort", () => {
			clearTimeout(timer);
			reject(new Error("aborted"));
		});
	});
}

/**
 * The demo's weather tool (fixed data).
 *
 * @example
 * const agent = new Agent({ initialState: { tools: [weatherTool, clockTool] } });
 */
export const weatherTool: AgentTool<typeof cityParams, { city: string }> = {
	name: "get_weather",
	label: "Weather",
	description: "Current weather in a city.",
	parameters: cityParams,
	async execute(_id, { city }, signal) {
		await pause(300, signal);
		const report = ownValue(WEATHER, city.toLowerCase()) ?? "no data";
		return { content: [{ type: "text", text: `${city}: ${report}` }], details: { city } };
	},
};

/**
 * The demo's clock tool (fixed time, so the output is reproducible).
 *
 * @example
 * const agent = new Agent({ initialState: { tools: [clockTool] } });
 */
export const clockTool: AgentTool<typeof cityParams, { city: string }> = {
	name: "get_time",
	label: "Clock",
	description: "Local time in a city.",
	parameters: cityParams,
	async execute(_id, { city }, signal) {
		await pause(150, signal);
		const offset = ownValue(UTC_OFFSET, city.toLowerCase()) ?? 0;
		const hour = (12 + offset + 24) % 24;
		return { content: [{ type: "text", text: `${city}: ${String(hour).padStart(2, "0")}:00` }], details: { city } };
	},
};
