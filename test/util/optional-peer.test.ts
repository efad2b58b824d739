/**
 * The messages of optional peers that cannot be loaded, and the ranges they name: those that
 * package.json declares.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { isMissingPeer, loadOptionalPeer, missingPeerMessage, OPTIONAL_PEER_RANGES, peerInstallCommand } from "../../src/util/optional-peer.js";

const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
	peerDependencies: Record<string, string>;
	peerDependenciesMeta: Record<string, { optional?: boolean }>;
};

describe("optional peers", () => {
	it("are the optional peerDependencies of package.json, with their ranges", () => {
		expect(OPTIONAL_PEER_RANGES).toEqual(manifest.peerDependencies);
		for (const name of Object.keys(OPTIONAL_PEER_RANGES)) expect(manifest.peerDependenciesMeta[name]?.optional).toBe(true);
	});

	it("install at the declared range, as a development dependency for testing tools", () => {
		expect(peerInstallCommand({ feature: "f", peer: "openai" })).toBe("npm install openai@^7.57.0");
		expect(peerInstallCommand({ feature: "f", peer: "fast-check", dev: true })).toBe("npm install --save-dev fast-check@^4.10.2");
	});

	it("count as missing only when the package itself cannot be found", async () => {
		const notFound = await import(["agentchart-no-such", "package"].join("-")).catch((error: unknown) => error);
		expect(isMissingPeer(notFound, "agentchart-no-such-package")).toBe(true);
		// A dependency of the peer that is missing is a broken install, not a missing peer.
		const nested = Object.assign(new Error("Cannot find package 'zod' imported from /app/node_modules/openai/index.mjs"), { code: "ERR_MODULE_NOT_FOUND" });
		expect(isMissingPeer(nested, "openai")).toBe(false);
		expect(isMissingPeer(new Error("Cannot find package 'openai'"), "openai")).toBe(false);
	});

	it("reject with the feature, the package, the command and Node's error as the cause", async () => {
		const use = { feature: "streamOpenAICompletions (agentchart)", peer: "openai" } as const;
		const notFound = Object.assign(new Error("Cannot find package 'openai' imported from /app/node_modules/agentchart/dist/providers/openai-client.js"), { code: "ERR_MODULE_NOT_FOUND" });
		const error = await loadOptionalPeer(use, () => Promise.reject(notFound)).then(() => new Error("it loaded"), (rejection: unknown) => rejection as Error);
		expect(error.message).toBe(missingPeerMessage(use));
		expect(error.message).toContain("`npm install openai@^7.57.0`");
		expect(error.cause).toBe(notFound);
	});

	it("refuse a module without the exports the feature uses", async () => {
		const use = { feature: "the default stream function of Agent (agentchart)", peer: "@mariozechner/pi-ai" } as const;
		const error = await loadOptionalPeer(use, async () => ({ streamSimple: undefined as unknown }), ["streamSimple"]).then(() => new Error("it loaded"), (rejection: unknown) => rejection as Error);
		expect(error.message).toMatch(/^the default stream function of Agent \(agentchart\) cannot use the installed "@mariozechner\/pi-ai" package: it has no streamSimple \(.*agentchart needs @mariozechner\/pi-ai@\^0\.73\.1: run `npm install @mariozechner\/pi-ai@\^0\.73\.1`\)$/);
	});
});
