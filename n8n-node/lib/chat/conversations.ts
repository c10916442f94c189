// Which conversation a model call belongs to, and which model served it last. An agent's later
// rounds resend the conversation's opening (the system prompt and the first human message) with
// its tool calls and results after it, so the opening names the conversation (the last call
// alone would not: the items of an execution interleave). n8n may build the sub-node anew for
// each call of an execution, so the memory is the execution's, one per sub-node and root item (two
// chains, or two items, may ask the same question). Its later rounds ask the engine
// to try that model first while it is admissible (`Item.prefer`; the engine heeds it under a
// routing that would scatter the conversation, not under a configured order): a tool call
// continues with the model that made it.
import type { BaseMessage } from '@langchain/core/messages';

/** Conversations remembered per sub-node instance (one execution's): the oldest go first. */
export const CONVERSATIONS_KEPT = 1000;

export class Conversations {
	private readonly served = new Map<string, number>();

	/** The model that served this conversation's last call, if any. */
	servedBy(messages: BaseMessage[]): number | undefined {
		return this.served.get(opening(messages));
	}

	remember(messages: BaseMessage[], provider: number): void {
		const key = opening(messages);
		this.served.delete(key);
		this.served.set(key, provider);
		if (this.served.size > CONVERSATIONS_KEPT)
			this.served.delete(this.served.keys().next().value as string);
	}
}

/** Executions remembered at once in this process (a running one is recent): the oldest go. */
export const EXECUTIONS_KEPT = 100;
const byExecution = new Map<string, Conversations>();

/** The conversations of `id` (an execution, a sub-node, a root item), kept across instances. */
export function conversationsOf(id: string): Conversations {
	let c = byExecution.get(id);
	if (c) byExecution.delete(id);
	else c = new Conversations();
	byExecution.set(id, c);
	if (byExecution.size > EXECUTIONS_KEPT)
		byExecution.delete(byExecution.keys().next().value as string);
	return c;
}

/** The messages up to and including the first human one, as text. */
function opening(messages: BaseMessage[]): string {
	const first = messages.findIndex((m) => kind(m) === 'human');
	const head = first < 0 ? messages.slice(0, 1) : messages.slice(0, first + 1);
	return JSON.stringify(head.map((m) => [kind(m), m.content]));
}

/** A message's type, by whichever name its copy of LangChain gives it. */
function kind(m: BaseMessage): string | undefined {
	const x = m as unknown as { getType?: () => string; _getType?: () => string; type?: string };
	return x.getType?.() ?? x._getType?.() ?? x.type;
}
