/** The three local model servers (Anthropic, OpenAI-compatible, proxy) for a suite that uses them all. */
import { afterAll, beforeAll } from "vitest";
import { type AnthropicTestServer, startAnthropicServer } from "./anthropic-server.js";
import { type OpenAITestServer, startOpenAIServer } from "./openai-server.js";
import { type ProxyTestServer, startProxyServer } from "./proxy-server.js";

/** The servers, there once the suite's `beforeAll` ran. */
export interface ProviderServers {
	anthropic: AnthropicTestServer;
	openai: OpenAITestServer;
	proxy: ProxyTestServer;
}

/**
 * Starts the three servers before the tests of the enclosing suite (or file) and closes them
 * after, also when a test failed.
 */
export function useProviderServers(): ProviderServers {
	const servers = {} as Partial<ProviderServers>;
	beforeAll(async () => {
		servers.anthropic = await startAnthropicServer();
		servers.openai = await startOpenAIServer();
		servers.proxy = await startProxyServer();
	});
	afterAll(async () => {
		await servers.anthropic?.close();
		await servers.openai?.close();
		await servers.proxy?.close();
	});
	return servers as ProviderServers;
}
