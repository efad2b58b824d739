/**
 * A small HTTP/2 balancer in front of several workers, standing in for the load balancer a
 * production deployment has (a Kubernetes service, an L7 proxy). Restate registers one URL per
 * deployment and pins each invocation to its deployment, so several workers serving the same
 * sessions sit behind one address; Restate keeps one HTTP/2 connection to it and multiplexes
 * every invocation attempt on it as a stream. A TCP proxy would send them all to one worker, so
 * this one balances streams: each new stream (one attempt of one invocation) goes to the next
 * worker that is up, and when a worker dies its streams are reset, which Restate answers by
 * retrying the attempt, here on another worker.
 */
import http2 from "node:http2";

/** A running balancer. */
export interface Balancer {
	/** The URL to register with Restate. */
	readonly url: string;
	/** How many streams each backend got so far, by backend URL. */
	readonly streams: Map<string, number>;
	close(): Promise<void>;
}

const HOP_HEADERS = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection"]);

function forwardable(headers: http2.IncomingHttpHeaders): http2.OutgoingHttpHeaders {
	const out: http2.OutgoingHttpHeaders = {};
	for (const [key, value] of Object.entries(headers)) {
		if (value === undefined || HOP_HEADERS.has(key)) continue;
		out[key] = value;
	}
	return out;
}

/**
 * Starts a balancer on 127.0.0.1:`port` over `backends` (their URLs, asked at each stream so
 * workers can come and go). Port 0 lets the system pick a free one as it binds (no window in
 * which another process can take it); `url` says which.
 *
 * @example
 * const balancer = await startBalancer(0, () => workers.map((w) => w.url));
 * await server.register(balancer.url);
 */
export async function startBalancer(port: number, backends: () => readonly string[]): Promise<Balancer> {
	const sessions = new Map<string, http2.ClientHttp2Session>();
	/** Backends that refused a connection recently, until when. */
	const down = new Map<string, number>();
	const streams = new Map<string, number>();
	let next = 0;

	const sessionFor = (url: string): http2.ClientHttp2Session => {
		let session = sessions.get(url);
		if (session && !session.closed && !session.destroyed) return session;
		session = http2.connect(url);
		const forget = () => {
			if (sessions.get(url) === session) sessions.delete(url);
		};
		session.on("error", (error: NodeJS.ErrnoException) => {
			if (error.code === "ECONNREFUSED" || error.code === "ECONNRESET") down.set(url, Date.now() + 500);
			forget();
		});
		session.on("close", forget);
		session.on("goaway", forget);
		sessions.set(url, session);
		return session;
	};

	const pick = (): string | undefined => {
		const all = backends();
		const now = Date.now();
		for (let tried = 0; tried < all.length; tried++) {
			const url = all[next++ % all.length];
			if (url !== undefined && (down.get(url) ?? 0) <= now) return url;
		}
		return all[next++ % Math.max(1, all.length)];
	};

	const server = http2.createServer();
	server.on("stream", (inbound, headers) => {
		const url = pick();
		if (!url) {
			inbound.close(http2.constants.NGHTTP2_REFUSED_STREAM);
			return;
		}
		streams.set(url, (streams.get(url) ?? 0) + 1);
		let outbound: http2.ClientHttp2Stream;
		try {
			outbound = sessionFor(url).request(forwardable(headers), { endStream: false });
		} catch {
			inbound.close(http2.constants.NGHTTP2_REFUSED_STREAM);
			return;
		}
		const fail = () => {
			if (!inbound.closed && !inbound.destroyed) inbound.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
			if (!outbound.closed && !outbound.destroyed) outbound.close(http2.constants.NGHTTP2_CANCEL);
		};
		outbound.on("response", (responseHeaders) => {
			if (inbound.closed || inbound.destroyed) return;
			const { ":status": status, ...rest } = responseHeaders;
			inbound.respond({ ":status": Number(status ?? 502), ...forwardable(rest) });
			outbound.pipe(inbound);
		});
		outbound.on("error", fail);
		outbound.on("close", () => {
			// A backend that died resets its streams without a clean end: the attempt fails.
			if (outbound.rstCode !== undefined && outbound.rstCode !== http2.constants.NGHTTP2_NO_ERROR) fail();
		});
		inbound.on("error", fail);
		inbound.on("close", () => {
			if (!outbound.closed && !outbound.destroyed) outbound.close(http2.constants.NGHTTP2_CANCEL);
		});
		inbound.pipe(outbound);
	});
	const restateSessions = new Set<http2.ServerHttp2Session>();
	server.on("session", (session) => {
		restateSessions.add(session);
		session.on("error", () => undefined);
		session.on("close", () => restateSessions.delete(session));
	});
	await new Promise<void>((resolve, reject) => {
		server.once("error", reject);
		server.listen(port, "127.0.0.1", () => resolve());
	});
	const address = server.address();
	const bound = typeof address === "object" && address ? address.port : port;
	return {
		url: `http://127.0.0.1:${bound}`,
		streams,
		close: async () => {
			for (const session of sessions.values()) session.destroy();
			// Restate keeps its connection open: close would wait for it for ever.
			for (const session of restateSessions) session.destroy();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
}
