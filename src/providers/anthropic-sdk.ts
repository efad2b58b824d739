/**
 * The Anthropic SDK, loaded at the first Anthropic call rather than with agentchart: an
 * application that never calls Anthropic (another provider, a scripted model, a proxy) does not
 * pay for it (about 25 MiB of resident memory and 0.4 s of start-up on a cold cache), as pi-ai
 * loads its providers.
 */
export type AnthropicSdk = typeof import("@anthropic-ai/sdk");

let loading: Promise<AnthropicSdk> | undefined;

/**
 * The SDK module, imported once (a failed import is tried again at the next call).
 *
 * @example
 * const sdk = await loadAnthropicSdk();
 * const client = new sdk.default({ apiKey });
 */
export function loadAnthropicSdk(): Promise<AnthropicSdk> {
	loading ??= import("@anthropic-ai/sdk").catch((error: unknown) => {
		loading = undefined;
		throw error;
	});
	return loading;
}
