// What a continuing model is asked: the same conversation and the partial answer as its own text
// so far. A vendor that takes an assistant prefix (Anthropic, without extended thinking) goes on
// from it; any other gets an instruction to continue exactly where it stopped.
import { AIMessage, HumanMessage, type BaseMessageLike } from '@langchain/core/messages';

export const CONTINUE_INSTRUCTION =
	'Your previous answer was cut off. Continue it exactly where it stopped: do not repeat anything already written and do not start over.';

interface ModelLike {
	/** A model with tools bound is a binding around it. */
	bound?: unknown;
	_llmType?: () => string;
	thinking?: { type?: string };
	lc_kwargs?: { invocationKwargs?: { thinking?: { type?: string } } };
}

/** Whether `model` continues an assistant prefix (Anthropic's Messages API, thinking off). */
export function takesPrefix(model: unknown): boolean {
	let m = model as ModelLike;
	for (let depth = 0; m?.bound && depth < 5; depth++) m = m.bound as ModelLike;
	let type = '';
	try {
		type = m._llmType?.() ?? '';
	} catch {
		type = '';
	}
	const thinking = m.thinking?.type ?? m.lc_kwargs?.invocationKwargs?.thinking?.type;
	return type === 'anthropic' && thinking !== 'enabled';
}

/** The messages that ask `model` to continue `partial`, after `messages`. */
export function continuationMessages(
	messages: BaseMessageLike[],
	partial: string,
	model: unknown,
): BaseMessageLike[] {
	// Anthropic refuses a prefix that ends in whitespace; the seam cuts a repeated space.
	if (takesPrefix(model)) return [...messages, new AIMessage(partial.trimEnd())];
	return [...messages, new AIMessage(partial), new HumanMessage(CONTINUE_INSTRUCTION)];
}
