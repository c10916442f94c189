// A provider's answer as the engine's checks read it: Response Must Contain (a dot path), an LLM
// preset's answer (text, finish word, refusal) and the chain's JSON Schema. Everything here only
// reads the body; which check failed and what it counts against is the engine's rule.
import type { AnswerFacts } from './engine';
import { answerFacts, checkedFacts } from './answerCheck/facts';
import { answerJson, type Parsed } from './answerCheck/answerJson';
import type { AnswerCheckPlan } from './plan/answerCheck';
import { presetCheckParts, presetFailedCheck, presetRefused } from './presets';
import type { ProviderRequest } from './params';
import { missingPath } from './transport';

export interface ResponseFacts {
	failed_check?: string;
	answer?: AnswerFacts;
	/** An LLM preset's answer text (for a repair round, when it missed the schema). */
	text?: string;
	/** The answer's JSON when the schema checked it and it parsed: what `success` carries, read
	 * once here rather than again when the item is placed. */
	parsed?: unknown;
}

export function responseFacts(
	req: ProviderRequest,
	body: unknown,
	check: AnswerCheckPlan | undefined,
): ResponseFacts {
	if (req.requiredPath && missingPath(body, req.requiredPath))
		return { failed_check: `required_path:${req.requiredPath}` };
	const schema = check?.schema;
	if (req.preset) {
		const a = presetCheckParts(req.preset, body);
		const parts = {
			text: a.text,
			toolCalls: 0,
			finish: a.finish,
			refusal: presetRefused(req.preset, body),
		};
		// Version 2.0, checking nothing: the preset's own check, as before (`empty_text`).
		const failed = check?.checkEmpty ? undefined : presetFailedCheck(a);
		const checked = checkedFacts(check, parts);
		return {
			...(failed ? { failed_check: failed } : {}),
			...(checked ? { answer: checked.facts, text: a.text, parsed: checked.parsed } : {}),
		};
	}
	if (!schema) return {};
	const checked = answerFacts(bodyParts(body), schema);
	return { answer: checked.facts, parsed: checked.parsed };
}

/** Any other provider's body: its JSON as it came (a text body is parsed, fence and all). */
function bodyParts(body: unknown) {
	const text = typeof body === 'string' ? body : '';
	return {
		text: typeof body === 'string' ? body : 'body',
		toolCalls: 0,
		finish: null,
		refusal: false,
		json: (): Parsed => (typeof body === 'string' ? answerJson(text) : { ok: true, value: body }),
	};
}
