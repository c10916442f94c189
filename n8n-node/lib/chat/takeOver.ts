// A connected model called through the Resilient Chat Model, made fit for the engine:
// - One owner of retries: exactly one request per engine attempt. LangChain clients retry in
//   their AsyncCaller (read at call time), and ChatOpenAI keeps one caller per API
//   (`completions`, `responses`) built from `fields`, which `bindTools` rebuilds from: all of
//   them run at 0 retries (the SDKs' own clients already do, but for the AWS SDK's: an AWS SDK v3
//   client, ChatBedrockConverse's `client`, retries in its own middleware, 3 attempts by
//   default, reading its config's `retryStrategy` and `maxAttempts` at each request: both are
//   set to one attempt).
// - The client's error kept: n8n's chat models throw a NodeApiError from the caller's
//   `onFailedAttempt`. n8n 2 keeps the client's error under its `cause`; n8n 1's loses it (a class
//   field resets `cause`), and with it the status headers and socket codes the engine needs. The
//   handler still runs and its error is still thrown, with the client's error put back under it
//   at CLIENT_ERROR (a Symbol: n8n writes `cause` into run data, and the body may hold the key).
// - The vendor's refusal kept on the Chat Completions path (./refusal.ts).
import { CLIENT_ERROR } from './outcome';
import { keepRefusal } from './refusal';

interface Caller {
	maxRetries?: number;
	onFailedAttempt?: (error: unknown) => unknown;
}

interface SdkClient {
	middlewareStack?: unknown;
	config?: { retryStrategy?: unknown; maxAttempts?: unknown };
}

interface Client {
	maxRetries?: number;
	client?: SdkClient;
	fields?: Caller;
	caller?: Caller;
	completions?: unknown;
	responses?: unknown;
	bound?: unknown;
}

const KEEPS = Symbol('resilient-chat-model keeps the client error');

function keepClientError(handler: Caller['onFailedAttempt']): Caller['onFailedAttempt'] {
	if (typeof handler !== 'function' || (handler as { [KEEPS]?: true })[KEEPS]) return handler;
	const kept = (error: unknown) => {
		try {
			return handler(error);
		} catch (thrown) {
			if (
				thrown !== error &&
				thrown instanceof Error &&
				(thrown as { cause?: unknown }).cause === undefined
			)
				Object.defineProperty(thrown, CLIENT_ERROR, { value: error, configurable: true });
			throw thrown;
		}
	};
	return Object.assign(kept, { [KEEPS]: true as const });
}

function takeOverCaller(c: Caller | undefined) {
	if (!c || typeof c !== 'object') return;
	if ('maxRetries' in c) c.maxRetries = 0;
	if (typeof c.onFailedAttempt === 'function')
		c.onFailedAttempt = keepClientError(c.onFailedAttempt);
}

/** A retry strategy (the AWS SDK's v2 interface) that never grants a retry: the middleware
 * rethrows the attempt's own error. */
const ONE_ATTEMPT = {
	acquireInitialRetryToken: async () => ({ getRetryCount: () => 0, getRetryDelay: () => 0 }),
	refreshRetryTokenForRetry: async () => {
		throw new Error('no retry: the Resilient Chat Model owns retries');
	},
	recordSuccess: () => undefined,
};

function takeOverSdkClient(c: SdkClient | undefined) {
	const config = c?.config;
	if (!c?.middlewareStack || !config || typeof config.retryStrategy !== 'function') return;
	config.retryStrategy = async () => ONE_ATTEMPT;
	config.maxAttempts = async () => 1;
}

/** Every client reachable from `model` (itself, its inner callers, a RunnableBinding's bound
 * model): retries off, the client's error kept. Returns the model. */
export function takeOver<T>(model: T): T {
	const seen = new Set<unknown>();
	const visit = (x: unknown) => {
		if (!x || typeof x !== 'object' || seen.has(x)) return;
		seen.add(x);
		const m = x as Client;
		if (m.fields && typeof m.fields === 'object') {
			m.fields.maxRetries = 0;
			takeOverCaller(m.fields);
		}
		if (typeof m.maxRetries === 'number') m.maxRetries = 0;
		takeOverCaller(m.caller);
		takeOverSdkClient(m.client);
		keepRefusal(m);
		visit(m.completions);
		visit(m.responses);
		visit(m.bound);
	};
	visit(model);
	return model;
}
