// Where a Call Chain item leaves, and with what: `success` (the serving provider's answer, or
// the Default Value when the chain was exhausted under On Exhaustion "default"), `deferred`
// (the input with `retry_at`) or `failed`; `_resilience` on each says what the engine did.
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';
import { itemOutcome } from '../../lib/resilience';
import type { ItemPlan } from '../../lib/params';
import { presetAnswer } from '../../lib/presets';
import type { ItemResult } from '../../lib/itemResult';

export const SUCCESS = 0;
export const DEFERRED = 1;
export const FAILED = 2;

export function placeItem(
	out: INodeExecutionData[][],
	input: INodeExecutionData,
	i: number,
	plan: ItemPlan,
	r: ItemResult,
	warnings: string[],
	correlationId: string,
) {
	// The node's own warnings (Retry On Fail) first, then the item's.
	const { output, fields, meta } = itemOutcome(
		r,
		correlationId,
		warnings,
		plan.onExhaustion === 'default',
	);
	out[output].push({
		json: { ...itemJson(input, plan, r), ...fields, _resilience: meta },
		pairedItem: { item: i },
	});
}

/** What an item's JSON is on its output: the serving provider's answer, the Default Value for an
 * exhausted chain under On Exhaustion "default", or the input as it came. */
function itemJson(input: INodeExecutionData, plan: ItemPlan, r: ItemResult): IDataObject {
	if (r.end.kind === 'done') {
		const body = answerOf(plan, r.end.name, r.body, r.parsed);
		return body !== null && typeof body === 'object' && !Array.isArray(body)
			? { ...(body as IDataObject) }
			: { data: body as IDataObject };
	}
	if (r.end.kind === 'defer' && plan.onExhaustion === 'default') return { ...plan.defaultValue };
	return input.json;
}

/** Keep input order within each output (a pool finishes items out of order). */
export function inInputOrder(out: INodeExecutionData[][]) {
	for (const o of out)
		o.sort(
			(a, b) => (a.pairedItem as { item: number }).item - (b.pairedItem as { item: number }).item,
		);
}

/** What a provider's answer puts on `success`: an LLM preset's answer in the one shape (the
 * vendor's body beside it only under Include Raw Response), any other body as it came. */
function answerOf(plan: ItemPlan, provider: string, body: unknown, parsed: unknown): unknown {
	const req = plan.requests.find((q) => q.name === provider);
	if (!req) return body;
	// The JSON the Answer Check's schema passed, beside the answer it came from.
	const withParsed = (v: unknown) =>
		parsed === undefined
			? v
			: v !== null && typeof v === 'object' && !Array.isArray(v)
				? { ...(v as IDataObject), parsed }
				: { data: v, parsed };
	if (!req.preset) return withParsed(body);
	const answer = presetAnswer(req.preset, body, provider);
	return withParsed(req.includeRawResponse ? { ...answer, raw: body } : answer);
}
