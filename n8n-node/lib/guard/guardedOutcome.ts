// What the guarded node did with one item, read from what n8n put there, as the engine's Outcome.
// Facts only: which output the item came from, and the status, code, message and class n8n
// recorded, unread (and the tokens an answer reported); which of them decides (n8n's message texts, a class-only "5XX"), whether
// that counts against the provider, is worth a retry or closes the gate, and whether the item
// was served (Report Outcome's output) is the engine's call: a 503 the guarded node passed on its
// main output is no success.
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import type { OutcomeFacts } from '../engine';
import { factsOfError, type ErrorLike } from '../errorFacts';
import { hintHeaders } from '../hintHeaders';
import { usageOf } from '../tokens/usage';

/** The fields of the HTTP Request node's full response (its "Include Response Headers and
 * Status" option): an item with all of them carries the status it was answered with. */
const FULL_RESPONSE = ['body', 'headers', 'statusCode', 'statusMessage'];

/**
 * `fromOutput`: the guarded node's output the item arrived from (n8n's source data); n8n puts a
 * node's error output after its main outputs, and moves there only items holding `error`.
 */
export function guardedOutcome(item: INodeExecutionData, fromOutput: number): OutcomeFacts {
	const json = item.json ?? {};
	const keys = Object.keys(json);
	// Continue (using error output): output >= 1 with `error`. Continue (regular output): n8n's
	// own error item, whose json holds only error/message/details.
	const errorItem =
		(fromOutput >= 1 && 'error' in json) ||
		(keys.includes('error') && keys.every((k) => ['error', 'message', 'details'].includes(k))) ||
		item.error !== undefined;
	if (!errorItem) {
		const full = FULL_RESPONSE.every((k) => keys.includes(k));
		// The tokens the answer reported settle what the check reserved (its tokens, its spend).
		const usage = usageOf(full ? json.body : json);
		return {
			kind: 'facts',
			answered: true,
			status: full ? (json.statusCode as number | string) : undefined,
			headers: full ? hintHeaders(json.headers) : undefined,
			...(usage ? { usage } : {}),
		};
	}
	const error = (item.error ?? json.error) as unknown;
	// n8n's error item keeps the error as an object (NodeApiError's JSON) or as its message.
	const e: ErrorLike =
		typeof error === 'object' && error !== null ? (error as ErrorLike) : { message: error };
	const details = (json.details ?? {}) as IDataObject;
	const outer: ErrorLike = { message: json.message };
	return factsOfError(e, [details as ErrorLike, outer]);
}
