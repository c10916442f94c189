// What the guarded node did with one item, read from what n8n put there, as the engine's Outcome.
// Facts only: which output the item came from and the status or error code n8n recorded; whether
// that counts against the provider, is worth a retry or closes the gate is the engine's call.
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import type { Outcome } from '../engine';

/** n8n's NodeApiError messages by HTTP status (n8n-workflow errors/node-api.error, the same text
 * in 1.123 and 2.41; tests/node-units/guarded-result.test.mjs builds them with both): nodes whose
 * error item carries only the message (the OpenAI node: `{ error: error.message }`) still tell
 * the status they met. The two generic ones name a class; its first status stands for it. */
const STATUS_MESSAGES: Record<string, number> = {
	'Bad request - please check your parameters': 400,
	'Authorization failed - please check your credentials': 401,
	'Payment required - perhaps check your payment details?': 402,
	'Forbidden - perhaps check your credentials?': 403,
	'The resource you are requesting could not be found': 404,
	'Method not allowed - please check you are using the right HTTP method': 405,
	'The service is receiving too many requests from you': 429,
	'The service was not able to process your request': 500,
	'Bad gateway - the service failed to handle your request': 502,
	'Service unavailable - try again later or consider setting this node to retry automatically (in the node settings)': 503,
	'Gateway timed out - perhaps try again later?': 504,
	'Your request is invalid or could not be processed by the service': 400,
	'The service failed to process your request': 500,
};

/** n8n's descriptive messages for network error codes (NodeError's COMMON_ERRORS, network ones). */
const CODE_MESSAGES: Record<string, string> = {
	'The service refused the connection - perhaps it is offline': 'ECONNREFUSED',
	'The connection to the server was closed unexpectedly, perhaps it is offline. You can retry the request immediately or wait and retry later.':
		'ECONNRESET',
	'The connection cannot be established, this usually occurs due to an incorrect host (domain) value':
		'ENOTFOUND',
	"The connection timed out, consider setting the 'Retry on Fail' option in the node settings":
		'ETIMEDOUT',
	'The connection was aborted, perhaps the server is offline': 'ECONNABORTED',
	'The host is unreachable, perhaps the server is offline': 'EHOSTUNREACH',
	'The DNS server returned an error, perhaps the server is offline': 'EAI_AGAIN',
};

export interface GuardedResult {
	/** The item left the guarded node on its error output (or as n8n's error item). */
	failed: boolean;
	outcome: Outcome;
	/** Where the outcome was read from, for the item's `_resilience` (e.g. `error.httpCode`). */
	from: string;
}

/**
 * `fromOutput`: the guarded node's output the item arrived from (n8n's source data); n8n puts a
 * node's error output after its main outputs, and moves there only items holding `error`.
 */
export function guardedResult(item: INodeExecutionData, fromOutput: number): GuardedResult {
	const json = item.json ?? {};
	const keys = Object.keys(json);
	// Continue (using error output): output >= 1 with `error`. Continue (regular output): n8n's
	// own error item, whose json holds only error/message/details.
	const errorItem =
		(fromOutput >= 1 && 'error' in json) ||
		(keys.includes('error') && keys.every((k) => ['error', 'message', 'details'].includes(k))) ||
		item.error !== undefined;
	if (!errorItem) return { failed: false, outcome: { kind: 'status', status: 200 }, from: 'main' };
	const error = (item.error ?? json.error) as unknown;
	const e = (typeof error === 'object' && error !== null ? error : {}) as IDataObject;
	const details = (json.details ?? {}) as IDataObject;
	const response = (e.response ?? {}) as IDataObject;
	const candidates: [string, unknown][] = [
		['error.httpCode', e.httpCode],
		['details.httpCode', details.httpCode],
		['error.statusCode', e.statusCode],
		['error.status', e.status],
		['error.response.status', response.status],
	];
	for (const [from, v] of candidates) {
		const status = Number(v);
		if (v !== null && v !== '' && Number.isInteger(status) && status >= 100 && status <= 599)
			return { failed: true, outcome: { kind: 'status', status }, from };
	}
	if (typeof e.code === 'string' && /^[A-Z][A-Z0-9_]*$/.test(e.code))
		return { failed: true, outcome: { kind: 'error', code: e.code }, from: 'error.code' };
	const message = typeof error === 'string' ? error : String(e.message ?? details.message ?? '');
	if (STATUS_MESSAGES[message] !== undefined)
		return {
			failed: true,
			outcome: { kind: 'status', status: STATUS_MESSAGES[message] },
			from: 'error (n8n message)',
		};
	if (CODE_MESSAGES[message] !== undefined)
		return {
			failed: true,
			outcome: { kind: 'error', code: CODE_MESSAGES[message] },
			from: 'error (n8n message)',
		};
	// A failure n8n recorded without a status or code: the provider failed, not worth repeating.
	return { failed: true, outcome: { kind: 'error', code: 'NODE_ERROR' }, from: 'error' };
}
