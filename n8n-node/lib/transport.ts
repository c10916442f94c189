// One HTTP attempt through n8n's own request helper. The deadline is an abort signal, and the only
// timer: n8n's `timeout` is a socket-idle timeout (a response that trickles a byte a second would
// never hit it), and set to the deadline it raced it, the attempt then reading as the client's
// ECONNABORTED instead of our TIMEOUT. Status codes are returned, never thrown; the engine classifies them.
import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
} from 'n8n-workflow';
import type { Outcome } from './engine';
import { hintHeaders } from './hintHeaders';
import { factsOfError } from './errorFacts';
import type { ProviderRequest } from './params';
import { sendWithCredential, type LoadedCredentials } from './auth';
import { attempt, type CallResult } from './attempt';
import { BODY_LIMIT, DEADLINE_CODE } from './engineConstants';

export type { CallResult } from './attempt';
export { Cancelled } from './attemptAbort';

export async function callProvider(
	ctx: IExecuteFunctions,
	req: ProviderRequest,
	extraHeaders: IDataObject,
	deadlineMs: number,
	cancel: AbortSignal | undefined,
	credentials: LoadedCredentials = {},
): Promise<CallResult> {
	return attempt<'deadline'>(
		cancel,
		async (abort) => {
			abort.after(deadlineMs, 'deadline');
			const options: IHttpRequestOptions = {
				method: req.method as IHttpRequestMethods,
				url: req.url,
				qs: req.qs,
				headers: { ...req.headers, ...extraHeaders },
				body: req.body as IDataObject | undefined,
				json: req.body !== undefined,
				returnFullResponse: true,
				ignoreHttpStatusErrors: true,
				maxRedirects: 5,
				abortSignal: abort.signal,
			};
			const res = (await (req.credentialType
				? sendWithCredential(ctx, req.credentialType, credentials, options)
				: ctx.helpers.httpRequest(options))) as {
				statusCode: number;
				headers: Record<string, unknown>;
				body: unknown;
			};
			return {
				outcome: { kind: 'status', status: res.statusCode, headers: hintHeaders(res.headers) },
				body: parseBody(res.body),
			};
		},
		// Our own deadline is our fact; anything else is the error's, read by the engine. A status
		// answered reaches the resolved path above (statuses never throw here), so a status left
		// on a thrown error (a 200 whose body was then cut off) is not the call's outcome.
		(error, fired): { outcome: Outcome } => ({
			outcome: fired
				? { kind: 'error', code: DEADLINE_CODE }
				: { ...factsOfError(error), status: undefined },
		}),
	);
}

function parseBody(body: unknown): unknown {
	if (Buffer.isBuffer(body)) body = body.toString('utf8');
	if (typeof body !== 'string') return body;
	try {
		return JSON.parse(body);
	} catch {
		return body;
	}
}

/** The start of a response body as text: what a vendor's error message is matched in. */
export function bodyExcerpt(body: unknown): string {
	if (body === undefined || body === null) return '';
	if (typeof body === 'string') return body.slice(0, BODY_LIMIT);
	if (Buffer.isBuffer(body)) return body.toString('utf8', 0, BODY_LIMIT);
	try {
		return (JSON.stringify(body) ?? '').slice(0, BODY_LIMIT);
	} catch {
		return ''; // a cyclic or otherwise unprintable value says nothing
	}
}

/** Gives the outcome a `body` the engine reads only for the statuses its rules need: a getter,
 * so a success body is never serialised (this file compares no statuses). */
export function offerBody(outcome: Outcome, body: unknown): void {
	if (outcome.kind !== 'status' && outcome.kind !== 'facts') return;
	Object.defineProperty(outcome, 'body', {
		get: () => bodyExcerpt(body),
		enumerable: false,
		configurable: true,
	});
}

/** The value at dot path `a.b.0.c` (undefined where the path leads nowhere). */
export function valueAt(body: unknown, path: string): unknown {
	let v: unknown = body;
	for (const part of path.split('.')) {
		if (v === null || typeof v !== 'object') return undefined;
		v = (v as Record<string, unknown>)[part];
	}
	return v;
}

/** `a.b.0.c` must hold a non-empty value. */
export function missingPath(body: unknown, path: string): boolean {
	const v = valueAt(body, path);
	return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
}
