// One streamed attempt: a connected model's `stream()` read under the engine's limits for it.
// Until a chunk commits the call (the engine's rule, on the chunk's facts) nothing reaches the
// caller and a failure is an ordinary attempt outcome; the non-committing chunks before it (a
// role-only delta, message_start, response.created) are merged into the committing one, so
// their metadata is kept without a content-less chunk of their own. Once committed, every chunk
// goes to the caller as it arrives, and the stream's end is the attempt's one outcome: answered,
// or broken (dropped, idle past the limit, past the item's budget).
import type { AIMessageChunk, BaseMessageLike } from '@langchain/core/messages';
import type { AnswerFacts, Outcome, StreamStep, UsageFacts } from '../engine';
import { Cancelled } from '../attemptAbort';
import { attempt, type CallResult } from '../attempt';
import { DEADLINE_CODE, IDLE_TIMEOUT_CODE } from '../engineConstants';
import type { Watch } from '../timers';
import { engineModule } from '../engine';
import { chunkFacts, type ChunkFacts } from './chunkFacts';
import { chunkText, type Seam } from './seam';
import { answered, errorText, outcomeOfModelError } from './outcome';
import { addUsage, usageOf } from '../tokens/usage';
import type { ChatModel } from './wrapper';

export interface StreamedAttempt {
	model: ChatModel;
	messages: BaseMessageLike[];
	options: Record<string, unknown>;
	limits: StreamStep;
	cancel?: AbortSignal;
	/** The engine's rule: does a chunk with these facts commit the call? */
	commits: (facts: ChunkFacts) => boolean;
	/** Run before the first committing chunk reaches the caller, with the ms since the attempt
	 * started (its time to first chunk, for the engine); false when another call of a hedging
	 * item committed first (this one is being aborted): nothing of it reaches the caller. */
	claim?: (afterMs: number) => boolean;
	/** Hand a chunk to the caller. */
	deliver: (chunk: AIMessageChunk) => void;
	/** The error a failed attempt threw (the model's own, thrown to the caller if it ends so). */
	failed: (error: unknown) => void;
	/** The Answer Check's facts for an answer that never committed (nothing of it reached the
	 * caller yet, so another model may still take the call). */
	check?: (answer: AIMessageChunk) => AnswerFacts | undefined;
	/** The engine's rule: the check these facts fail, if any. */
	fails?: (facts: AnswerFacts) => string | undefined;
	/** Hold the whole answer until it is checked (a JSON Schema needs all of it): nothing reaches
	 * the caller before the stream ends, and an answer that fails moves on to the next model. The
	 * held answer still commits at its first chunk for the timers (the idle limit runs, the
	 * first-chunk deadline is cleared) and for hedging. */
	hold?: boolean;
	/** The answer the caller has so far (across this item's calls): what a break leaves, and what
	 * a continuation continues. Delivered text is appended to it. */
	answer?: { text: string };
	/** This call continues a broken stream: its chunks meet the answer at this seam. */
	seam?: Seam;
}

/** The engine's code for each of the stream's timers: before the commit a timeout like any
 * attempt's; after it, what broke the committed stream. */
const TIMER_CODE = {
	first_chunk: DEADLINE_CODE,
	total: DEADLINE_CODE,
	idle: IDLE_TIMEOUT_CODE,
} as const;

export async function streamAttempt(a: StreamedAttempt): Promise<CallResult> {
	let committed = false;
	// Held chunks (`hold`): delivered only once the whole answer passed its check.
	let held: AIMessageChunk[] | undefined;
	// Tool-call deltas, held until the stream ends whole: LangChain merges tool-call chunks by
	// index, so half a call from a broken stream and a whole one from the next model would make
	// one corrupt call. Text streams on meanwhile.
	const tools: AIMessageChunk[] = [];
	// Whether any of this call's chunks reached the caller (a break then leaves part of an answer).
	let delivered = false;
	const answer = a.answer ?? { text: '' };
	const hand = (chunk: AIMessageChunk) => {
		a.deliver(chunk);
		answer.text += chunkText(chunk);
		delivered = true;
	};
	const send = (chunk: AIMessageChunk) => {
		if (chunk.tool_call_chunks?.length) tools.push(chunk);
		else for (const c of a.seam ? a.seam.push(chunk) : [chunk]) hand(c);
	};
	// The usage the chunks reported (in parts: Anthropic's input first, its output last).
	let usage: UsageFacts | undefined;
	return attempt<keyof typeof TIMER_CODE>(
		a.cancel,
		async (abort, started) => {
			const first = abort.after(a.limits.first_chunk_ms, 'first_chunk');
			abort.after(a.limits.total_ms, 'total');
			let idle: Watch | undefined;
			// The engine's idle limit, learned from this stream's own chunks so far (a few bytes of
			// the engine's memory, given back when it is collected).
			const pace = new (engineModule().StreamPace)(a.limits);
			let pending: AIMessageChunk | undefined;
			const stream = await a.model.stream(a.messages, { ...a.options, signal: abort.signal });
			for await (const chunk of stream as AsyncIterable<AIMessageChunk>) {
				usage = addUsage(usage, usageOf(chunk));
				if (held) {
					held.push(chunk);
				} else if (committed) {
					send(chunk);
				} else {
					pending = pending ? (pending.concat(chunk) as AIMessageChunk) : chunk;
					if (!a.commits(chunkFacts(chunk))) continue;
					// The first hedged call to commit is the answer; a later one hands nothing over.
					if (a.claim && !a.claim(Date.now() - started)) throw new Cancelled();
					committed = true;
					abort.clear(first);
					if (a.hold) held = [pending];
					else send(pending);
					pending = undefined;
				}
				const idleMs = pace.chunk(performance.now());
				if (idle) idle.restart(idleMs);
				else idle = abort.after(idleMs, 'idle');
			}
			// An answer with nothing that commits (an empty text, a refusal), or a held one: checked
			// before it is handed over, so a failed check moves the call on with nothing delivered.
			const unsent = held ?? (!committed && pending ? [pending] : undefined);
			const whole = unsent?.reduce((m, c) => m.concat(c) as AIMessageChunk);
			const facts = whole ? a.check?.(whole) : undefined;
			// What the stream showed of its model's pace (the engine's word), for the next streams.
			const outcome = answered(facts, usage, pace.learnedGap());
			if (facts && a.fails?.(facts)) return { outcome, body: undefined };
			for (const chunk of unsent ?? []) send(chunk);
			// The stream ended whole: what the seam still reads, then the whole tool calls.
			for (const chunk of a.seam?.end() ?? []) hand(chunk);
			for (const chunk of tools) hand(chunk);
			return { outcome, body: undefined };
		},
		(error, fired) => {
			a.failed(error);
			// Held, or nothing of it reached the caller (a tool call held whole, a seam still read):
			// an ordinary failure another model may mend as a whole.
			if (!committed || held || !delivered) {
				const seen: Outcome = fired
					? { kind: 'error', code: TIMER_CODE[fired] }
					: outcomeOfModelError(error);
				return { outcome: seen, body: errorText(error) };
			}
			// Once committed, whatever ended the stream is one fact: our timer's code, or the
			// error's facts, whose code the engine reads.
			// With the characters of the answer the caller has: what a continuation goes on from.
			const broken: Outcome = fired
				? { kind: 'broken', code: TIMER_CODE[fired], delivered_chars: answer.text.length }
				: {
						...outcomeOfModelError(error),
						kind: 'broken',
						code: undefined,
						delivered_chars: answer.text.length,
					};
			return { outcome: broken, body: errorText(error) };
		},
	);
}
