// An answer's facts for the engine's answer checks, from what the caller read of it: Call
// Chain's LLM presets (their one answer shape) and the chat model's AIMessage. The schema is
// run here because it reads the answer; whether a miss matters is the engine's call.
import type { AnswerFacts } from '../engine';
import { answerJson, type Parsed } from './answerJson';
import type { AnswerSchema } from './schema';
import type { AnswerCheckPlan } from '../plan/answerCheck';

/** What the caller read of an answer, as it came. */
export interface AnswerParts {
	text: string;
	toolCalls: number;
	/** The vendor's finish word, as it came. */
	finish: string | null;
	refusal: boolean;
	/** The answer's JSON, when it is not read from the text as it is (the AI Agent's final-answer
	 * tool call, the output parser's wrapper taken off); read only when a schema checks it. */
	json?: () => Parsed;
}

export interface CheckedAnswer {
	facts: AnswerFacts;
	/** The answer's JSON when a schema checked it and it parsed. */
	parsed?: unknown;
}

export function answerFacts(p: AnswerParts, schema?: AnswerSchema): CheckedAnswer {
	const facts: AnswerFacts = {
		empty: p.text.trim() === '' && p.toolCalls === 0,
		finish: p.finish,
		refusal: p.refusal,
	};
	if (!schema) return { facts };
	facts.schema_checked = true;
	const json = p.json ? p.json() : answerJson(p.text);
	if (!json.ok) {
		facts.schema_errors = [json.error];
		return { facts };
	}
	const errors = schema.check(json.value);
	if (errors.length) facts.schema_errors = errors;
	return { facts, parsed: json.value };
}

/** The facts a node with an Answer Check hands over for `p`, all of them as they came: which
 * checks read them is the engine's `check_empty` and `check_finish`. */
export function checkedFacts(
	check: AnswerCheckPlan | undefined,
	p: AnswerParts,
): CheckedAnswer | undefined {
	return check ? answerFacts(p, check.schema) : undefined;
}
