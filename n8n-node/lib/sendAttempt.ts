// One attempt's request as the engine's call step says, and its outcome as the engine will read
// it: the request built (Idempotency-Key, the secret header), the call made through the item's
// `call`, the response check run and the body offered. No decision: the engine makes them.
import type { IDataObject } from 'n8n-workflow';
import type { CallResult } from './attempt';
import type { CallStep } from './hedgedCalls';
import type { ItemContext } from './itemContext';
import { responseFacts } from './responseCheck';
import { repairBody } from './answerCheck/repair';
import { offerBody, valueAt } from './transport';
import { usageOf } from './tokens/usage';

/** One call as the step says, its outcome as the engine reads it: the Idempotency-Key and the
 * secret header added, the response check run (it reads the body; whether it matters is the
 * engine's call), and the body offered (the engine matches a 400's body against the vendors'
 * "context too long" wordings). */
export async function send(
	c: ItemContext,
	step: CallStep,
	cancel?: AbortSignal,
	claim?: (afterMs: number) => boolean,
): Promise<CallResult> {
	const planned = c.plan.requests[step.provider];
	// The engine's repair round: the preset's request with its last answer and the errors.
	const miss = step.repair ? c.misses?.get(step.provider) : undefined;
	const asked =
		miss && planned.preset
			? { ...planned, repair: true, body: repairBody(planned.preset, planned.body as object, miss) }
			: step.repair
				? { ...planned, repair: true }
				: planned;
	// The engine's continuation of a broken stream (the chat model's): the caller asks to go on.
	const req = step.continuation ? { ...asked, continuation: true } : asked;
	const headers: IDataObject = {};
	if (step.idempotency_key) headers['Idempotency-Key'] = step.idempotency_key;
	if (req.secretName)
		headers[req.secretHeader] = (req.secretPrefix ?? '') + c.secrets[req.secretName];
	const result = await c.call(req, headers, step.deadline_ms, cancel, step.stream, claim);
	const outcome = result.outcome;
	if (outcome.kind === 'status') {
		const facts = responseFacts(req, result.body, c.plan.answerCheck);
		if (facts.failed_check) outcome.failed_check = facts.failed_check;
		if (facts.answer) outcome.answer = facts.answer;
		if (facts.parsed !== undefined) result.parsed = facts.parsed;
		const errors = facts.answer?.schema_errors;
		if (errors?.length && facts.text !== undefined)
			(c.misses ??= new Map()).set(step.provider, { text: facts.text, errors });
	}
	// The tokens the answer reports, where it reports them (the engine settles them; a provider
	// without token limits or prices reads nothing of them).
	if (outcome.kind === 'status') {
		const usage = usageOf(req.usagePath ? valueAt(result.body, req.usagePath) : result.body);
		if (usage) outcome.usage = usage;
	}
	offerBody(outcome, result.body);
	return result;
}
