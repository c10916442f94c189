// LLM presets: a provider kind that builds the vendor's request from a few fields and reads its
// answer into one shape. Pure functions; the item loop calls them, the engine decides policy.
import { anthropicMessagesParts, anthropicMessagesRequest } from './anthropicMessages';
import { geminiGenerateContentParts, geminiGenerateContentRequest } from './geminiGenerateContent';
import { openAiChatParts, openAiChatRequest } from './openAiChat';
import {
	asObject,
	at,
	finishWord,
	presetAnswer as answerOf,
	type AnswerParts,
	type PresetAnswer,
	type PresetFields,
	type PresetRequest,
} from './shared';

export type { PresetAnswer, PresetFields, PresetRequest } from './shared';
export { PresetInputError } from './shared';
export { OPENAI_DEFAULT_BASE_URL } from './openAiChat';
export {
	ANTHROPIC_DEFAULT_BASE_URL,
	ANTHROPIC_DEFAULT_MAX_TOKENS,
	ANTHROPIC_VERSION,
} from './anthropicMessages';
export { GEMINI_DEFAULT_BASE_URL } from './geminiGenerateContent';

export type PresetKind = 'openAiChat' | 'anthropicMessages' | 'geminiGenerateContent';

export const PRESET_KINDS: readonly PresetKind[] = [
	'openAiChat',
	'anthropicMessages',
	'geminiGenerateContent',
];

const PRESETS: Record<
	PresetKind,
	{
		request: (f: PresetFields) => PresetRequest;
		parts: (body: unknown) => AnswerParts;
	}
> = {
	openAiChat: { request: openAiChatRequest, parts: openAiChatParts },
	anthropicMessages: { request: anthropicMessagesRequest, parts: anthropicMessagesParts },
	geminiGenerateContent: {
		request: geminiGenerateContentRequest,
		parts: geminiGenerateContentParts,
	},
};

export function isPresetKind(kind: unknown): kind is PresetKind {
	return typeof kind === 'string' && Object.prototype.hasOwnProperty.call(PRESETS, kind);
}

function preset(kind: PresetKind) {
	if (!isPresetKind(kind)) throw new Error(`Unknown LLM preset kind "${String(kind)}"`);
	return PRESETS[kind];
}

/** The vendor's URL, method, headers (no auth) and body. Throws PresetInputError naming a bad
 * field. */
export function presetRequest(kind: PresetKind, fields: PresetFields): PresetRequest {
	return preset(kind).request(fields);
}

/** The vendor's answer body in one shape. Never throws on an odd body: missing values are ''
 * (text) or null. */
export function presetAnswer(kind: PresetKind, body: unknown, provider: string): PresetAnswer {
	return answerOf(provider, preset(kind).parts(body));
}

/** What the answer checks read of the vendor's answer body: its text and its finish word as
 * it came (the engine reads the word; the answer shows it in the shared vocabulary). */
export function presetCheckParts(
	kind: PresetKind,
	body: unknown,
): { text: string; finish: string | null } {
	const parts = preset(kind).parts(body);
	return { text: parts.text, finish: finishWord(parts.finish) };
}

/** Whether the vendor marked the answer a refusal apart from its finish word (OpenAI's
 * `message.refusal` text; Anthropic says it in `stop_reason`, read as the finish word). */
export function presetRefused(kind: PresetKind, body: unknown): boolean {
	if (kind !== 'openAiChat') return false;
	const refusal = at(asObject(body), 'choices', 0, 'message', 'refusal');
	return typeof refusal === 'string' && refusal.trim() !== '';
}

/** The `failed_check` a preset's default response check reports: the answer has no text. */
export const EMPTY_TEXT_CHECK = 'empty_text';

/** The default response check of every preset: the failed check's name, or undefined when the
 * answer has text (whitespace alone is no answer). The item loop puts it in the outcome's `failed_check`; the engine decides what
 * a failed check means. */
export function presetFailedCheck(answer: { text: string }): string | undefined {
	return answer.text.trim() === '' ? EMPTY_TEXT_CHECK : undefined;
}
